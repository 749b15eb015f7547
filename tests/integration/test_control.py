"""The engine's control interface while it runs: DPDK telemetry commands (engine/control.c),
spoken to over the telemetry socket the way dpdk-telemetry.py does."""
import json
import os
import re
import socket
import subprocess
import time

from conftest import engine_path
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role


def _telemetry(prefix, command, timeout=10.0):
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < end, "no telemetry socket at " + path
        time.sleep(0.05)
    while True:  # the socket exists from EAL's start; the commands from when the run is set up
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        json.loads(s.recv(4096).decode())  # the greeting: version, pid, max_output_len
        s.send(command.encode())
        reply = json.loads(s.recv(65536).decode())
        s.close()
        if list(reply.values())[0] is not None:
            return reply
        assert time.monotonic() < end, "%s: no answer" % command
        time.sleep(0.05)


def test_flow_rate_changed_while_running(tmp_path):
    prefix = "roce-ctl-%d" % os.getpid()
    p = port("n", "net_null0", MAC_A, "192.168.3.1")
    f = flow("w", "n", MAC_B, "192.168.3.2", transport='"uc"', ops="{ write = 1; }", message_size=1000, mtu=1024,
             qpn=0x10, dest_qpn=0x20, rate_gbps=1.0)
    u = flow("u", "n", MAC_B, "192.168.3.2", transport='"uc"', message_size=64, qpn=0x30, dest_qpn=0x40, count=2,
             rate_pps=1000.0)
    text = cfg([p], [role(1, "n", "tx")], [f, u], eal='lcores = "0-1"; memory_mb = 256; file_prefix = "%s";' % prefix)
    (tmp_path / "c.cfg").write_text(text)
    proc = subprocess.Popen([str(engine_path()), "-f", str(tmp_path / "c.cfg"), "-d", "3", "-i", "0.25", "-r",
                             str(tmp_path / "r.json")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        flows = _telemetry(prefix, "/roce/flows")["/roce/flows"]
        assert flows["w"]["qps"] == 1 and float(flows["w"]["rate_gbps"]) == 1.0 and flows["u"]["qps"] == 2
        time.sleep(1.0)
        got = _telemetry(prefix, "/roce/flow_rate,w,2.5")["/roce/flow_rate"]
        assert got == {"flow": "w", "rate_gbps": "2.5"}
        bad = _telemetry(prefix, "/roce/flow_rate,u,2")["/roce/flow_rate"]
        assert "only flows paced in Gb/s" in bad["error"]
        assert "no flow group" in _telemetry(prefix, "/roce/flow_rate,nope,2")["/roce/flow_rate"]["error"]
        assert "GBPS" in _telemetry(prefix, "/roce/flow_rate,w,-1")["/roce/flow_rate"]["error"]
        assert float(_telemetry(prefix, "/roce/flows")["/roce/flows"]["w"]["rate_gbps"]) == 2.5
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    rates = [float(m) for m in re.findall(r"\] n +tx +[\d.]+ Mpps +([\d.]+) Gb/s", out)]
    frame = 1000 + 70  # WRITE ONLY: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4
    scale = frame / (frame + 4)  # the live line counts frame bytes; pacing counts the FCS too
    assert len(rates) >= 8, out
    assert abs(rates[1] - 1.0 * scale) < 0.1, rates   # before the change (the second quarter second)
    assert abs(rates[-2] - 2.5 * scale) < 0.2, rates  # after it


def test_ets_weight_changed_while_running(tmp_path):
    """Two saturated classes at 1:1 behind a 2 Gb/s egress; /roce/egress sets class 0's weight to
    3: over the next second the classes' bytes (from /roce/flows) split 3:1."""
    prefix = "roce-ets-%d" % os.getpid()
    p = port("n", "net_null0", MAC_A, "192.168.3.1", "qos = { egress = { shape_gbps = 2.0; }; };")
    flows = [flow("c%d" % c, "n", MAC_B, "192.168.3.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x10 + 0x10 * c, dest_qpn=0x100 + 0x10 * c, dscp=8 * c) for c in range(2)]
    text = cfg([p], [role(1, "n", "tx")], flows, eal='lcores = "0-1"; memory_mb = 256; file_prefix = "%s";' % prefix)
    (tmp_path / "c.cfg").write_text(text)
    proc = subprocess.Popen([str(engine_path()), "-f", str(tmp_path / "c.cfg"), "-d", "3", "-q", "-r",
                             str(tmp_path / "r.json")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _telemetry(prefix, "/roce/flows")
        time.sleep(0.5)
        got = _telemetry(prefix, "/roce/egress,n,0,3")["/roce/egress"]
        assert got == {"port": "n", "tc": 0, "weight": 3}
        assert "usage" in _telemetry(prefix, "/roce/egress,n,0")["/roce/egress"]["error"]
        assert "qos.egress" in _telemetry(prefix, "/roce/egress,x,0,3")["/roce/egress"]["error"]
        before = _telemetry(prefix, "/roce/flows")["/roce/flows"]
        time.sleep(1.0)
        after = _telemetry(prefix, "/roce/flows")["/roce/flows"]
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    d0 = after["c0"]["tx_bytes"] - before["c0"]["tx_bytes"]
    d1 = after["c1"]["tx_bytes"] - before["c1"]["tx_bytes"]
    assert abs(d0 / (d0 + d1) - 0.75) < 0.02 * 0.75, (d0, d1)


def _run_engine(tmp_path, prefix, ports, roles, flows, run="", duration="3"):
    text = cfg(ports, roles, flows, eal='lcores = "0-1"; memory_mb = 256; file_prefix = "%s";' % prefix, run=run)
    (tmp_path / "c.cfg").write_text(text)
    return subprocess.Popen([str(engine_path()), "-f", str(tmp_path / "c.cfg"), "-d", duration, "-q", "-r",
                             str(tmp_path / "r.json")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _check_latency(s):
    assert s["count"] > 0, s
    assert s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["p99_9"] <= s["max"], s
    assert s["min"] <= float(s["mean"]) <= s["max"], s


def test_ports_latency_pfc_while_running(tmp_path):
    """/roce/ports, /roce/latency and /roce/pfc on a ring pair: a 2-QP UC flow at 1 Gb/s per QP with
    one-way latency from a to b, an unmeasured flow, and a PFC generator on a that pauses b."""
    prefix = "roce-mon-%d" % os.getpid()
    ports, ip_b = pair_ports("mon")
    lat = flow("lat", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1000, mtu=1024,
               qpn=0x10, dest_qpn=0x20, count=2, rate_gbps=1.0, latency='{ mode = "oneway"; }')
    bg = flow("bg", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=64, qpn=0x30,
              dest_qpn=0x40, rate_pps=1000.0)
    gen = ('pfc_generators = ( { port = "a"; priorities = [3]; quanta = 65535; rate_pps = 20.0; '
           'start_s = 0.1; } );')
    proc = _run_engine(tmp_path, prefix, ports, [role(1, "a", "txrx"), role(1, "b", "rx")], [lat, bg], run=gen)
    try:
        first = _telemetry(prefix, "/roce/ports")["/roce/ports"]
        time.sleep(1.0)
        before = _telemetry(prefix, "/roce/ports")["/roce/ports"]
        time.sleep(1.0)
        after = _telemetry(prefix, "/roce/ports")["/roce/ports"]
        latency = _telemetry(prefix, "/roce/latency")["/roce/latency"]
        one = _telemetry(prefix, "/roce/latency,lat")["/roce/latency"]
        unknown = _telemetry(prefix, "/roce/latency,nope")["/roce/latency"]
        unmeasured = _telemetry(prefix, "/roce/latency,bg")["/roce/latency"]
        pfc = _telemetry(prefix, "/roce/pfc")["/roce/pfc"]
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    rep = json.loads((tmp_path / "r.json").read_text())
    print("first /roce/ports:", json.dumps(first))
    print("/roce/ports:", json.dumps(after))
    print("/roce/latency:", json.dumps(latency))
    print("/roce/latency,lat:", json.dumps(one))
    print("/roce/pfc:", json.dumps(pfc))

    # ports: names, counters that grow, rates over the second between two calls
    assert set(after) == {"a", "b"}
    a0, a1, b1 = before["a"], after["a"], after["b"]
    assert a1["driver"] == "net_ring" and float(a1["link_gbps"]) == 100.0
    assert a1["tx_packets"] > a0["tx_packets"] > first["a"]["tx_packets"] >= 0
    assert a1["tx_bytes"] > a0["tx_bytes"] and b1["rx_packets"] > before["b"]["rx_packets"]
    assert 0.8 < float(a1["interval_s"]) < 1.5, a1
    frame = 1000 + 70  # WRITE ONLY over IPv4 (the probe rides in the payload)
    want = 2 * 1.0 * frame / (frame + 4)  # two QPs; the counters leave out the FCS pacing counts
    for name, key in (("a", "tx_gbps"), ("b", "rx_gbps")):
        assert abs(float(after[name][key]) - want) < 0.2 * want, (name, after[name])
    mpps = float(a1["tx_mpps"])
    assert abs(mpps - want * 1e9 / 8 / frame / 1e6) < 0.2 * mpps + 0.002, a1  # + bg's 1000 pps
    assert b1["rx_malformed"] == 0 and b1["rx_dropped"] == 0 and b1["rx_cnp"] == 0 and b1["rx_ecn_ce"] == 0
    assert a1["mbuf_alloc_failures"] == 0 and isinstance(a1["tx_queue_full"], int)
    # the first call measures from the start of the run
    assert float(first["a"]["interval_s"]) >= 0 and float(first["a"]["tx_gbps"]) < 1.2 * want
    # the run's totals are at least what the commands saw
    assert rep["ports"][0]["tx_packets"] >= a1["tx_packets"] and rep["ports"][1]["rx_packets"] >= b1["rx_packets"]

    # latency: b's receiver QPs (one-way), the measured group, no entry for the unmeasured one
    assert set(latency) == {"ports", "flows"}
    _check_latency(latency["ports"]["b"]["oneway"])
    assert latency["ports"]["a"] == {} or "oneway" not in latency["ports"]["a"]
    assert set(latency["flows"]) == {"lat"}
    g = latency["flows"]["lat"]
    assert g["mode"] == "oneway" and g["qps"] == 2
    _check_latency(g["oneway"])
    assert one["flow"] == "lat" and set(one["lat"]["first_qps"]) == {"0", "1"}
    for i, q in sorted(one["lat"]["first_qps"].items()):
        assert q["qpn"] == 0x10 + int(i) and q["dest_qpn"] == 0x20 + int(i)
        _check_latency(q["oneway"])
    assert "no flow group" in unknown["error"]
    assert "no latency" in unmeasured["error"]

    # PFC: a's generator pauses b's priority 3
    for name in ("a", "b"):
        for key in ("pfc_rx", "pfc_xoff_rx", "paused_ns", "pfc_tx"):
            assert len(pfc[name][key]) == 8, (name, key, pfc[name])
        assert pfc[name]["honour_pfc"] == 1 and "pfc_xoff" not in pfc[name]
    pa, pb = pfc["a"], pfc["b"]
    assert pa["generator_frames"] > 0 and pa["pfc_tx"][3] == pa["generator_frames"]
    # counters read one after the other while frames arrive: one frame apart at most
    assert 0 < pb["pfc_rx"][3] <= pa["pfc_tx"][3] + 1 and abs(pb["pfc_xoff_rx"][3] - pb["pfc_rx"][3]) <= 1
    assert [pb["pfc_rx"][k] for k in (0, 1, 2, 4, 5, 6, 7)] == [0] * 7
    assert pb["paused_ns"][3] > 0 and pa["paused_ns"] == [0] * 8
    assert pb["paused_ns"][3] <= (pb["pfc_rx"][3] + 1) * 65535 * 512 / 100  # 65535 quanta at 100 Gb/s each
    assert rep["ports"][1]["pfc_rx"][3] >= pb["pfc_rx"][3]


def test_pfc_thresholds_seen_live(tmp_path):
    """/roce/pfc on a port with qos.pfc_xoff: its XOFF/XON counts and episodes per priority, and
    the peer's PFC received and time paused, while the run goes on."""
    prefix = "roce-xoff-%d" % os.getpid()
    ports, ip_b = pair_ports("monx")
    ports = [p.replace("100.0", "10.0") for p in ports]
    ports[1] = ports[1].replace("}", 'qos = { pfc_xoff = { priorities = [3]; xoff_bytes = 200000; '
                                     'xon_bytes = 100000; drain_gbps = 1.0; }; }; }')
    f = flow("hi", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1024, qpn=0x10,
             dest_qpn=0x20, dscp=26, rate_gbps=2.0)
    proc = _run_engine(tmp_path, prefix, ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f], duration="2")
    try:
        _telemetry(prefix, "/roce/flows")
        time.sleep(1.0)
        pfc = _telemetry(prefix, "/roce/pfc")["/roce/pfc"]
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    print("/roce/pfc:", json.dumps(pfc))
    x = pfc["b"]["pfc_xoff"]
    for key in ("xoff_sent", "xon_sent", "episodes", "backlog_bytes"):
        assert len(x[key]) == 8, x
    assert x["episodes"][3] > 0 and x["xoff_sent"][3] >= x["episodes"][3]
    assert [x["xoff_sent"][k] for k in (0, 1, 2, 4, 5, 6, 7)] == [0] * 7
    assert pfc["b"]["pfc_tx"][3] > 0 and [pfc["b"]["pfc_tx"][k] for k in (0, 1, 2, 4, 5, 6, 7)] == [0] * 7
    assert pfc["a"]["pfc_rx"][3] > 0 and pfc["a"]["paused_ns"][3] > 0
    assert "pfc_xoff" not in pfc["a"] and pfc["a"]["generator_frames"] == 0

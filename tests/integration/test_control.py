"""The engine's control interface while it runs: DPDK telemetry commands (telemetry/control.c),
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


def _by_name(objects):
    """{name: object} of an answer's objects keyed by index; the keys must be the indexes 0, 1, ..."""
    assert all(k.isdigit() for k in objects), objects
    return {o["name"]: o for o in objects.values()}


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
        flows = _by_name(_telemetry(prefix, "/roce/flows")["/roce/flows"])
        assert flows["w"]["qps"] == 1 and float(flows["w"]["rate_gbps"]) == 1.0 and flows["u"]["qps"] == 2
        time.sleep(1.0)
        got = _telemetry(prefix, "/roce/flow_rate,w,2.5")["/roce/flow_rate"]
        assert got == {"flow": "w", "rate_gbps": "2.5"}
        bad = _telemetry(prefix, "/roce/flow_rate,u,2")["/roce/flow_rate"]
        assert "only flows paced in Gb/s" in bad["error"]
        assert "no flow group" in _telemetry(prefix, "/roce/flow_rate,nope,2")["/roce/flow_rate"]["error"]
        assert "GBPS" in _telemetry(prefix, "/roce/flow_rate,w,-1")["/roce/flow_rate"]["error"]
        assert float(_by_name(_telemetry(prefix, "/roce/flows")["/roce/flows"])["w"]["rate_gbps"]) == 2.5
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    rates = [float(m) for m in re.findall(r"\] n +tx +[\d.]+ Mpps +([\d.]+) Gb/s", out)]
    frame = 1000 + 70  # WRITE ONLY: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4
    scale = frame / (frame + 4)  # the live line counts frame bytes; pacing counts the FCS too
    assert len(rates) >= 8, out
    # before the change (the second and third quarter seconds) and after it (the last three
    # before the partial last line): one interval of each is enough, a busy machine may hold
    # the lcore up in another
    assert any(abs(r - 1.0 * scale) < 0.1 for r in rates[1:3]), rates
    assert any(abs(r - 2.5 * scale) < 0.2 for r in rates[-4:-1]), rates


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
        before = _by_name(_telemetry(prefix, "/roce/flows")["/roce/flows"])
        time.sleep(1.0)
        after = _by_name(_telemetry(prefix, "/roce/flows")["/roce/flows"])
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
        first = _by_name(_telemetry(prefix, "/roce/ports")["/roce/ports"])
        time.sleep(1.0)
        before = _by_name(_telemetry(prefix, "/roce/ports")["/roce/ports"])
        time.sleep(1.0)
        after = _by_name(_telemetry(prefix, "/roce/ports")["/roce/ports"])
        latency = _telemetry(prefix, "/roce/latency")["/roce/latency"]
        one = _telemetry(prefix, "/roce/latency,lat")["/roce/latency"]
        unknown = _telemetry(prefix, "/roce/latency,nope")["/roce/latency"]
        unmeasured = _telemetry(prefix, "/roce/latency,bg")["/roce/latency"]
        pfc = _by_name(_telemetry(prefix, "/roce/pfc")["/roce/pfc"])
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
    lat_ports = _by_name(latency["ports"])
    _check_latency(lat_ports["b"]["oneway"])
    assert "oneway" not in lat_ports["a"]
    assert set(_by_name(latency["flows"])) == {"lat"}
    g = _by_name(latency["flows"])["lat"]
    assert g["mode"] == "oneway" and g["qps"] == 2
    _check_latency(g["oneway"])
    assert one["flow"]["name"] == "lat" and set(one["flow"]["first_qps"]) == {"0", "1"}
    for i, q in sorted(one["flow"]["first_qps"].items()):
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
        pfc = _by_name(_telemetry(prefix, "/roce/pfc")["/roce/pfc"])
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


# Every character the config accepts in a name (A-Z a-z 0-9 _ -, 1..31 of them, '-' or a digit first
# included): DPDK 22.11 refuses '-' in a telemetry dictionary's keys, so the answers key what the
# config names by its index and carry the name as a value.
PORT_NAMES = ["port-a", "-B_9z"]
FLOW_NAMES = ["rc-write", "ud-send", "Zz-09_every-character-max-len31"]


def test_every_name_the_config_accepts(tmp_path):
    """Ports and flow groups named with every character the config allows, read over the telemetry
    socket (each command, each setter) and over /metrics (prometheus_client's parser); error
    messages come back whole."""
    from test_http_exporter import free_port, get, samples
    assert len(FLOW_NAMES[2]) == 31
    prefix = "roce-names-%d" % os.getpid()
    pa, pb = PORT_NAMES
    fa, fb, fc = FLOW_NAMES
    ports = [port(pa, "ring:names%d:a" % os.getpid(), MAC_A, "192.168.9.1",
                  "qos = { egress = { shape_gbps = 50.0; }; };"),
             port(pb, "ring:names%d:b" % os.getpid(), MAC_B, "192.168.9.2")]
    flows = [flow(fa, pa, MAC_B, "192.168.9.2", transport='"rc"', ops="{ write = 1; }", message_size=4096, mtu=1024,
                  qpn=0x10, dest_qpn=0x20, count=2, rate_gbps=1.0, cc='"dcqcn"', latency='{ mode = "oneway"; }',
                  inject='( { action = "ce"; every = 50; } )'),
             flow(fb, pa, MAC_B, "192.168.9.2", transport='"ud"', ops="{ send = 1; }", message_size=256,
                  qpn=0x30, dest_qpn=0x40, rate_pps=1000.0),
             flow(fc, pb, MAC_A, "192.168.9.1", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x50, dest_qpn=0x60, rate_gbps=0.5, latency='{ mode = "oneway"; }')]
    web = free_port()
    proc = _run_engine(tmp_path, prefix, ports, [role(1, pa, "txrx"), role(1, pb, "txrx")], flows,
                       run="run = { http = %d; http_linger_s = 2.0; };" % web, duration="4")
    try:
        first = _telemetry(prefix, "/roce/flows")["/roce/flows"]
        assert [o["name"] for o in first.values()] == FLOW_NAMES, first
        end = time.monotonic() + 10
        while True:  # until CNPs came back to rc-write (a loaded machine or the ASan build start late)
            cc = _telemetry(prefix, "/roce/cc")["/roce/cc"]
            if _by_name(cc["flows"])[fa]["cnps"] > 0 or time.monotonic() > end:
                break
            time.sleep(0.1)
        got = {
            "flow_rate": _telemetry(prefix, "/roce/flow_rate,%s,2.5" % fa)["/roce/flow_rate"],
            "flow_rate_pps": _telemetry(prefix, "/roce/flow_rate,%s,2" % fb)["/roce/flow_rate"],
            "flows": _telemetry(prefix, "/roce/flows")["/roce/flows"],
            "cc_one": _telemetry(prefix, "/roce/cc,%s" % fa)["/roce/cc"],
            "cc_none": _telemetry(prefix, "/roce/cc,%s" % fc)["/roce/cc"],
            "cc_set": _telemetry(prefix, "/roce/cc_set,%s,rpg_ai_rate,7" % fa)["/roce/cc_set"],
            "cc_set_long": _telemetry(prefix, "/roce/cc_set,%s,%s,1" % (fa, "p" * 63))["/roce/cc_set"],
            "egress": _telemetry(prefix, "/roce/egress,%s,0,3,40" % pa)["/roce/egress"],
            "ports": _telemetry(prefix, "/roce/ports")["/roce/ports"],
            "latency": _telemetry(prefix, "/roce/latency")["/roce/latency"],
            "latency_one": _telemetry(prefix, "/roce/latency,%s" % fc)["/roce/latency"],
            "pfc": _telemetry(prefix, "/roce/pfc")["/roce/pfc"],
        }
        text = None
        end = time.monotonic() + 30
        while time.monotonic() < end and proc.poll() is None:  # the final numbers, while the server lingers
            try:
                text = get("http://127.0.0.1:%d/metrics" % web)[2]
            except OSError:
                pass
            if text and re.search(r"^roce_run_active 0$", text, re.M):
                break
            time.sleep(0.2)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    print(json.dumps(got, indent=1))
    rep = json.loads((tmp_path / "r.json").read_text())

    flows = _by_name(first)
    assert list(flows) == FLOW_NAMES and [first[str(i)]["name"] for i in range(3)] == FLOW_NAMES
    assert flows[fa]["qps"] == 2 and flows[fa]["port"] == pa and float(flows[fa]["rate_gbps"]) == 1.0
    assert flows[fc]["port"] == pb and flows[fc]["tx_packets"] >= 0
    assert got["flow_rate"] == {"flow": fa, "rate_gbps": "2.5"}
    assert float(_by_name(got["flows"])[fa]["rate_gbps"]) == 2.5
    # a setter's error whole (DPDK cuts string values at 127 bytes)
    assert got["flow_rate_pps"] == {"error": "the flow has no rate_gbps: only flows paced in Gb/s change rate "
                                             "(unpaced QPs: round robin; rate_pps: per packet)"}
    assert got["cc_set_long"] == {"error": "dcqcn has no parameter '%s' (docs/cc.md)" % ("p" * 63)}
    assert got["cc_set"] == {"flow": fa, "parameter": "rpg_ai_rate", "value": "7"}
    assert "no congestion control" in got["cc_none"]["error"]

    g = _by_name(cc["flows"])
    assert list(g) == [fa] and g[fa]["algorithm"] == "dcqcn" and g[fa]["qps"] == 2 and g[fa]["cnps"] > 0, cc
    assert set(g[fa]["first_qps"]) == {"0", "1"}
    assert list(_by_name(cc["notification_points"])) == PORT_NAMES
    assert got["cc_one"]["flow"]["name"] == fa and got["cc_one"]["parameters"]["rpg_ai_rate"] == "5"
    assert got["egress"] == {"port": pa, "tc": 0, "weight": 3, "shape_gbps": "40"}

    p = _by_name(got["ports"])
    assert list(p) == PORT_NAMES and p[pa]["tx_packets"] > 0 and p[pb]["rx_packets"] > 0
    lat = got["latency"]
    assert list(_by_name(lat["ports"])) == PORT_NAMES
    lat_flows = _by_name(lat["flows"])
    assert list(lat_flows) == [fa, fc] and set(lat["flows"]) == {"0", "2"}  # keys: the config's indexes
    _check_latency(lat_flows[fa]["oneway"])
    _check_latency(_by_name(lat["ports"])[pb]["oneway"])
    one = got["latency_one"]["flow"]
    assert one["name"] == fc and one["qps"] == 1 and set(one["first_qps"]) == {"0"}
    _check_latency(one["oneway"])
    assert list(_by_name(got["pfc"])) == PORT_NAMES and len(_by_name(got["pfc"])[pa]["pfc_rx"]) == 8

    # /metrics: the same names as label values, the final numbers the report's
    assert text is not None, out
    smp = samples(text)
    tx_ports = {dict(k[1])["port"]: v for k, v in smp.items() if k[0] == "roce_port_tx_packets_total"}
    assert tx_ports == {x["name"]: x["tx_packets"] for x in rep["ports"]}
    tx_flows = {dict(k[1])["flow"]: v for k, v in smp.items() if k[0] == "roce_flow_tx_packets_total"}
    by_group = {}
    for q in rep["flows"]:
        by_group[q["group"]] = by_group.get(q["group"], 0) + q["tx_packets"]
    assert tx_flows == by_group and set(tx_flows) == set(FLOW_NAMES)

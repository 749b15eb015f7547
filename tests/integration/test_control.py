"""The engine's control interface while it runs: DPDK telemetry commands (engine/control.c),
spoken to over the telemetry socket the way dpdk-telemetry.py does."""
import json
import os
import re
import socket
import subprocess
import time

from conftest import engine_path
from test_engine import MAC_A, MAC_B, cfg, flow, port, role


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

"""Captures (--capture FILE.pcapng, run.capture*; docs/monitoring.md): the frames the engine sends
and receives, copied with DPDK's rte_pcapng, read back by tshark and scapy.

* An RC WRITE run over a ring pair: every frame is in the file, on its port's interface and in its
  direction (tshark), the counts equal the report's port counters, the RoCE frames dissect with
  the right opcodes, their ICRCs verify (scapy), and their times lie within the run.
* Sampling (one in N per port and direction), one port only, a snap length, and a path that cannot
  be written (exit 5 before any traffic).
"""
import subprocess
import time
from collections import Counter

from scapy.all import Ether, rdpcap
from scapy.contrib.roce import BTH

from test_engine import MAC_B, cfg, flow, pair_ports, role


def _run(engine, tmp_path, run="", args=()):
    ports, ip_b = pair_ports("cap")
    f = flow("r", "a", MAC_B, ip_b, transport='"rc"', ops="{ write = 1; }", message_size=2048, qpn=0x10, dest_qpn=0x20,
             rate_gbps=0.5, stop="{ messages = 500; }")
    t0 = time.time_ns()
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f], run=run), *args)
    return rc, rep, out, t0, time.time_ns()


def tshark_rows(path, *fields):
    """tshark's fields of every frame of a capture (RoCE on 4791 dissected as InfiniBand)."""
    r = subprocess.run(["tshark", "-r", str(path), "-d", "udp.port==4791,infiniband", "--disable-protocol", "tftp",
                        "-T", "fields"] + [a for f in fields for a in ("-e", f)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return [l.split("\t") for l in r.stdout.splitlines()]


def test_every_frame_on_its_interface_and_direction(engine, tmp_path):
    cap = tmp_path / "all.pcapng"
    rc, rep, out, t0, t1 = _run(engine, tmp_path, args=("--capture", str(cap)))
    assert rc == 0, out
    a, b = rep["ports"]
    assert rep["capture"]["frames"] == a["tx_packets"] + a["rx_packets"] + b["tx_packets"] + b["rx_packets"] == 3000
    assert rep["capture"]["dropped"] == 0
    rows = tshark_rows(cap, "frame.interface_id", "frame.p2p_dir", "infiniband.bth.opcode", "frame.time_epoch")
    seen = Counter((r[0], r[1], r[2]) for r in rows)
    # interface 0 = port a (DPDK port 0): WRITE FIRST (6) / LAST (8) out, ACKs (17) in; b the reverse
    assert seen == {("0", "0", "6"): 500, ("0", "0", "8"): 500, ("0", "1", "17"): 500,
                    ("1", "1", "6"): 500, ("1", "1", "8"): 500, ("1", "0", "17"): 500}, seen
    times = [float(r[3]) * 1e9 for r in rows]
    assert t0 - 1e9 < min(times) <= max(times) < t1 + 1e9  # the engine's time base: UNIX time
    # the ICRC of every frame as scapy recomputes it (IPv4)
    for p in rdpcap(str(cap))[:200]:
        raw = bytes(p)
        q = Ether(raw).copy()
        q[BTH].icrc = None
        assert bytes(q) == raw


def test_sampled_one_port_and_snaplen(engine, tmp_path):
    cap = tmp_path / "s.pcapng"
    rc, rep, out, _, _ = _run(engine, tmp_path, run='run = { capture = "%s"; capture_every = 10; capture_snaplen = 64; '
                                                  'capture_ports = ["b"]; };' % cap)
    assert rc == 0, out
    b = rep["ports"][1]
    assert rep["capture"]["every"] == 10
    assert rep["capture"]["frames"] == b["tx_packets"] // 10 + b["rx_packets"] // 10 == 150
    rows = tshark_rows(cap, "frame.interface_id", "frame.p2p_dir", "frame.cap_len", "frame.len")
    assert Counter((r[0], r[1]) for r in rows) == {("1", "1"): 100, ("1", "0"): 50}
    # WRITE packets (1,024-byte payloads: 1,098-byte frames) cut to 64 bytes, ACKs (62) whole
    assert all(int(r[2]) == min(64, int(r[3])) for r in rows) and {int(r[3]) for r in rows} == {1098, 62}


def test_capture_path_that_cannot_be_written(engine, tmp_path):
    rc, rep, out, _, _ = _run(engine, tmp_path, args=("--capture", str(tmp_path / "no" / "such" / "dir.pcapng")))
    assert rc == 5 and "run.capture: cannot write" in out and rep is None, out

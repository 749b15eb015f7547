"""Captures (--capture FILE.pcapng, run.capture*; docs/monitoring.md): the frames the engine sends
and receives, copied with DPDK's rte_pcapng, read back by tshark and scapy.

* An RC WRITE run over a ring pair: every frame is in the file, on its port's interface and in its
  direction (tshark), the counts equal the report's port counters, the RoCE frames dissect with
  the right opcodes, their ICRCs verify (scapy), and their times lie within the run.
* Sampling (one in N per port and direction), one port only, a snap length, and a path that cannot
  be written (exit 5 before any traffic).
* Snapped captures as roce-pcap reads them (frames cut at 128 bytes, and at 64 with VLAN and
  IPv6 headers: the BTH cut too): no frame malformed, exit status 0, every cut frame said to be
  cut, lengths and BTH fields as tshark reads them; tshark with the column set docs/monitoring.md
  gives shows no "Malformed", and none is flagged malformed (_ws.malformed).
* A long capture (300,000 frames, far more than the copy buffers hold) keeps every frame: each
  PSN in each direction, as tshark reads the file; the summary line says what was written and
  dropped. A capture that cannot keep up (an unpaced sender, every frame) says so in the live
  lines and the summary, with the report's count.
"""
import json
import re
import subprocess
import time

import pytest
from collections import Counter

from scapy.all import Ether, rdpcap
from scapy.contrib.roce import BTH

from conftest import engine_path, pcap_tool_path
from test_engine import MAC_B, cfg, flow, pair_ports, port, role


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


# tshark's packet list for snapped captures (docs/monitoring.md): the captured length and the BTH
# instead of the Info column, where tshark 4.0's InfiniBand dissector writes "Invalid Packet
# Length from LRH! [Malformed Packet]" for every frame whose payload was not captured
TSHARK_CUT_COLUMNS = ('gui.column.format:"No.","%m","Time","%t","Source","%s","Destination","%d","Protocol","%p",'
                      '"Length","%L","Captured","%Cus:frame.cap_len","Opcode","%Cus:infiniband.bth.opcode",'
                      '"QP","%Cus:infiniband.bth.destqp","PSN","%Cus:infiniband.bth.psn"')


@pytest.mark.parametrize("snaplen,v6,vlan", [(128, False, False), (64, True, True)], ids=["128-ipv4", "64-ipv6-vlan"])
def test_snapped_capture_reads_as_cut_not_malformed(engine, tmp_path, snaplen, v6, vlan):
    cap = tmp_path / "snap.pcapng"
    ports, ip_b = pair_ports("capsnap", v6=v6)
    f = flow("r", "a", MAC_B, ip_b, transport='"rc"', ops="{ write = 1; }", message_size=2048, qpn=0x10, dest_qpn=0x20,
             rate_gbps=0.5, stop="{ messages = 50; }", **({"vlan": 100} if vlan else {}))
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f],
                                  run='run = { capture = "%s"; capture_snaplen = %d; };' % (cap, snaplen)))
    assert rc == 0 and rep["capture"]["frames"] == 300, out
    r = subprocess.run([str(pcap_tool_path()), "read", str(cap), "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert r.stderr.strip().endswith("malformed 0; %d cut short by the capture, checked as far as captured"
                                     % sum(o["caplen"] < o["len"] for o in objs)), r.stderr
    rows = tshark_rows(cap, "frame.len", "frame.cap_len", "infiniband.bth.opcode", "infiniband.bth.psn",
                       "infiniband.bth.destqp")
    assert len(rows) == len(objs) == 300
    bth_cut = 0
    for o, (flen, caplen, opcode, psn, qp) in zip(objs, rows):
        assert o["kind"] == "roce" and o["error"] == "none", o
        assert (o["len"], o["caplen"]) == (int(flen), int(caplen)), o
        assert (o["cut"] is None) == (o["caplen"] == o["len"]), o
        if o["bth"] is None:  # cut before the BTH's end: RoCEv2 by its UDP port
            bth_cut += 1
            assert o["udp"]["dport"] == 4791 and o["cut"]["unchecked"] == "bth", o
            continue
        assert (o["bth"]["opcode"], o["bth"]["psn"], o["bth"]["dqpn"]) == (int(opcode), int(psn), int(qp, 16)), o
        if o["cut"] is None:
            assert o["icrc"]["ok"] is True, o  # the ACKs: shorter than the snap length
    # IPv4 at 128: every header captured; VLAN + IPv6 at 64: the UDP header's checksum and the BTH cut
    assert bth_cut == (0 if snaplen == 128 else 300)
    listing = subprocess.run(["tshark", "-r", str(cap), "-d", "udp.port==4791,infiniband", "--disable-protocol", "tftp",
                              "-o", TSHARK_CUT_COLUMNS], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 300, listing.stderr
    assert "Malformed" not in listing.stdout, listing.stdout[:2000]
    assert not any(r[0] for r in tshark_rows(cap, "_ws.malformed"))


def test_capture_path_that_cannot_be_written(engine, tmp_path):
    (tmp_path / "plain").write_text("")  # a missing folder would be made: a file stands in the way
    rc, rep, out, _, _ = _run(engine, tmp_path, args=("--capture", str(tmp_path / "plain" / "such" / "dir.pcapng")))
    assert rc == 5 and "run.capture: cannot write" in out and rep is None, out


@pytest.mark.release_only  # the release build only (CI's time): a long run
def test_long_capture_keeps_every_frame(engine, tmp_path):
    """The copies go back to their pool once written: a capture goes on for as long as the run
    (it stopped at the pool's 4,607 copies, dropping the rest unseen)."""
    cap = tmp_path / "long.pcapng"
    ports, ip_b = pair_ports("caplong")
    # 37,500 UC WRITEs of 4 packets: 150,000 frames out of a, 150,000 into b, ~115,000 copies a second
    f = flow("w", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=4096, mtu=1024, qpn=0x10,
             dest_qpn=0x20, rate_gbps=0.5, stop="{ messages = 37500; }")
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f],
                                  run='run = { capture = "%s"; capture_snaplen = 128; };' % cap))
    assert rc == 0, out
    a, b = rep["ports"]
    assert a["tx_packets"] == b["rx_packets"] == 150000
    assert rep["capture"] == {"path": str(cap), "every": 1, "frames": 300000, "dropped": 0, "write_errors": 0}, out
    assert "summary: capture %s: 300000 frames written, 0 dropped\n" % cap in out, out
    rows = tshark_rows(cap, "frame.p2p_dir", "infiniband.bth.psn")
    assert len(rows) == 300000
    for d in ("0", "1"):  # sent by a, received by b: every PSN once, in order
        assert [int(r[1]) for r in rows if r[0] == d] == list(range(150000)), d


def test_capture_that_cannot_keep_up_says_so(engine, tmp_path):
    """An unpaced sender (millions of frames a second) with every frame captured outruns the main
    lcore's writing: the copies it could not keep are counted per port in the live lines and the
    summary, which says what to do; the run still ends on time."""
    cap = tmp_path / "fast.pcapng"
    p = port("n", "net_null0", "02:00:00:00:00:01", "192.168.9.1")
    f = flow("w", "n", "02:00:00:00:00:02", "192.168.9.2", transport='"uc"', ops="{ write = 1; }", message_size=64,
             qpn=0x10, dest_qpn=0x20)
    (tmp_path / "fast.cfg").write_text(cfg([p], [role(1, "n", "tx")], [f], run='run = { capture = "%s"; capture_snaplen = 64; };' % cap))
    r = subprocess.run([str(engine_path()), "-f", "fast.cfg", "-i", "0.2", "-d", "0.7", "-r", "fast.json"],
                       capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    out = r.stdout + r.stderr
    cap.unlink()  # some hundred MB
    assert r.returncode == 0, out
    rep = json.loads((tmp_path / "fast.json").read_text())
    # the main lcore writes what a ring held when it came, not what the lcore adds meanwhile:
    # it is back every millisecond (live lines, the end of the run) however fast frames come
    assert rep["duration_s"] < 1.2, out
    c = rep["capture"]
    if c["dropped"] == 0:
        pytest.skip("the capture kept up with an unpaced sender on this machine: no drop to show")
    assert c["frames"] + c["dropped"] == rep["ports"][0]["tx_packets"]
    assert ("summary: capture %s: %d frames written, %d dropped (port n %d)\n" %
            (cap, c["frames"], c["dropped"], c["dropped"])) in out, out
    assert "summary: capture did not keep up: capture fewer frames or bytes (run.capture_every" in out
    live = [int(m) for m in re.findall(r"^\[ *[0-9.]+s\] n .*\| capture dropped ([0-9]+)", out, re.M)]
    assert live and sum(live) <= c["dropped"], out

"""Latency measurement end to end on virtual devices (docs/latency.md).

What it proves:
* a capture with known probe send times and known capture timestamps, fed in through net_pcap
  (whose capture timestamps are the port's RX times), yields exactly the known latencies, sample
  by sample (CSV) and as minimum and maximum of the histogram;
* the probes the engine writes, on the fast path, the shape path and the general path, carry the
  right flow, consecutive sequence numbers and plausible send times, and every frame's ICRC still
  checks with scapy and with an independent decoder;
* one-way times between two ports of one process, ping-pong round trips through the reflect role
  (with every raw sample in the CSV), RC request -> ACK times, ping-pong losses on a port nobody
  answers, and the start-up errors of impossible timestamp settings.
"""
import csv
import struct
import time

from scapy.all import Ether, IP, UDP, raw, rdpcap
from scapy.contrib.roce import BTH

import oracle_common as oc
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role

MAGIC = 0x526F4C61


def probe_bytes(flow_id, seq, tx_ns, session=0xBEEF, flags=0):
    return struct.pack("!IBBHIIQ", MAGIC, 1, flags, session, flow_id, seq, tx_ns)


def parse_probe(payload):
    if len(payload) < 24:
        return None
    magic, ver, flags, session, flow_id, seq, tx_ns = struct.unpack("!IBBHIIQ", payload[:24])
    if magic != MAGIC:
        return None
    return {"version": ver, "flags": flags, "session": session, "flow": flow_id, "seq": seq, "tx_ns": tx_ns}


def write_pcap_us(path, records):
    """Classic pcap, microsecond timestamps: records = [(ts_us, frame bytes)]."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts_us, fr in records:
            f.write(struct.pack("<IIII", ts_us // 1000000, ts_us % 1000000, len(fr), len(fr)))
            f.write(fr)


# ---- known timestamps through net_pcap -------------------------------------------------------

def test_pcap_known_timestamps_give_exact_latencies(engine, tmp_path):
    """UC SEND ONLY frames made by scapy (which computes the ICRC), each with a probe sent at a
    known time; the capture records each frame that many microseconds later. net_pcap hands the
    capture time to the engine as the RX timestamp, so each latency must come out exactly."""
    base_ns = 1_700_000_000_000_000_000          # a multiple of 1 us: capture times stay exact
    lat_us = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181,
              6765, 10946, 100000, 1000000, 2500000]
    records, expect = [], []
    for i, l in enumerate(lat_us):
        tx_ns = base_ns + i * 10_000_000_000     # 10 s apart: capture order = send order
        payload = probe_bytes(7, i, tx_ns) + bytes(40)
        p = (Ether(src=MAC_A, dst=MAC_B) / IP(src="192.168.5.1", dst="192.168.5.2") /
             UDP(sport=49152, dport=4791) / BTH(opcode=0x24, dqpn=0x77, psn=100 + i) / payload)
        fr = raw(Ether(raw(p)))                   # scapy fills lengths, checksum and ICRC
        records.append((tx_ns // 1000 + l, fr))
        expect.append(l * 1000)
    pcap = tmp_path / "known.pcap"
    write_pcap_us(pcap, records)
    samples = tmp_path / "samples.csv"
    p = port("p", "net_pcap0", MAC_B, "192.168.5.2", 'vdev_args = "rx_pcap=%s";' % pcap)
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "rx")], [],
                                  run='run = { latency_samples = "%s"; latency_sample_every = 1; };' % samples),
                              "-d", "1.5")
    assert rc == 0, out
    assert rep["ports"][0]["latency_ns"]["clock"]["source"] == "pcap"
    (q,) = [q for q in rep["rx_qps"] if q["qpn"] == 0x77]
    assert q["packets"] == len(lat_us) and q["icrc_errors"] == 0
    lo = q["latency_ns"]["oneway"]
    assert lo["count"] == len(lat_us)
    assert lo["min"] == min(expect) and lo["max"] == max(expect)
    assert lo["clock_disagreements"] == 0
    rows = list(csv.DictReader(open(samples)))
    assert [int(r["latency_ns"]) for r in rows] == expect
    assert [int(r["seq"]) for r in rows] == list(range(len(lat_us)))
    assert all(r["kind"] == "oneway" and int(r["flow"]) == 7 and int(r["session"]) == 0xBEEF for r in rows)
    port_lat = rep["ports"][0]["latency_ns"]["oneway"]
    assert port_lat["count"] == len(lat_us) and port_lat["max"] == max(expect)
    # percentiles within the histogram's stated error (1/128) of the exact nearest-rank values
    s = sorted(expect)
    for key, pct in (("p50", 50), ("p90", 90), ("p99", 99)):
        exact = s[max(0, -(-len(s) * pct // 100) - 1)]
        assert abs(lo[key] - exact) <= exact / 128, (key, lo[key], exact)


# ---- the probes the engine sends -----------------------------------------------------------------

def _check_probes(frames, flows_expected, t0_ns, t1_ns, min_payload=24):
    by_flow = {}
    for fr in frames:
        b = raw(fr)
        d = oc.decode_frame(b)
        assert d["icrc_wire"] == d["icrc_calc"], "ICRC differs from the independent decoder"
        if d["ip"]["version"] == 4:
            p = Ether(b[:14 + struct.unpack("!H", b[16:18])[0]])
            wire = p[BTH].icrc
            del p[BTH].icrc
            assert Ether(raw(p))[BTH].icrc == wire, "scapy computes another ICRC"
        payload = d.get("payload", b"")
        pr = parse_probe(payload)
        if len(payload) < min_payload:
            assert pr is None
            continue
        assert pr is not None, "a packet with %d payload bytes has no probe" % len(payload)
        assert pr["version"] == 1 and t0_ns <= pr["tx_ns"] <= t1_ns
        by_flow.setdefault(pr["flow"], []).append(pr)
    assert sorted(by_flow) == sorted(flows_expected)
    sessions = {pr["session"] for prs in by_flow.values() for pr in prs}
    assert len(sessions) == 1
    for prs in by_flow.values():
        assert [pr["seq"] for pr in prs] == list(range(len(prs)))
        assert all(a["tx_ns"] <= b["tx_ns"] for a, b in zip(prs, prs[1:]))
    return by_flow


def _tx_pcap(engine, tmp_path, flows, extra_port=""):
    pcap = tmp_path / "tx.pcap"
    p = port("p", "net_pcap0", MAC_A, "192.168.9.1", 'vdev_args = "tx_pcap=%s"; mtu = 4200; %s' % (pcap, extra_port))
    t0 = time.time_ns()
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "tx")], flows))
    t1 = time.time_ns()
    assert rc == 0, out
    return rep, rdpcap(str(pcap)), t0, t1


def test_probes_fast_path(engine, tmp_path):
    """UC, one fixed size, one operation: the fast path stamps probes a whole visit at a time."""
    f = flow("f", "p", MAC_B, "192.168.9.2", transport='"uc"', ops="{ write = 1; }", message_size=64,
             qpn=0x40, dest_qpn=0x80, count=3, stop="{ messages = 300; }", latency='{ mode = "oneway"; }')
    rep, frames, t0, t1 = _tx_pcap(engine, tmp_path, [f])
    assert len(frames) == 900
    by_flow = _check_probes(frames, [0, 1, 2], t0, t1)
    assert all(len(v) == 300 for v in by_flow.values())
    assert all(fl["latency_ns"]["probes_sent"] == 300 for fl in rep["flows"])


def test_probes_shape_and_general_paths(engine, tmp_path):
    """RC with an operation mix (shapes, packet by packet: multi-packet messages whose last
    packet is too short for a probe) and UD with sizes drawn uniformly (no shapes: the ICRC is
    computed over the whole packet)."""
    rc_flow = flow("r", "p", MAC_B, "192.168.9.2", transport='"rc"', ops="{ write = 1; send = 1; }",
                   message_size=2060, mtu=1024, qpn=0x40, dest_qpn=0x80, count=2, stop="{ messages = 10; }",
                   rc="{ retry_limit = 0; retry_timeout_us = 500000.0; }", latency='{ mode = "oneway"; }')
    ud_flow = flow("u", "p", MAC_B, "192.168.9.2", transport='"ud"', ops="{ send = 1; }",
                   message_size='{ dist = "uniform"; min = 24; max = 1000; }', qpn=0x100, dest_qpn=0x200,
                   stop="{ messages = 50; }", latency='{ mode = "oneway"; }')
    rep, frames, t0, t1 = _tx_pcap(engine, tmp_path, [rc_flow, ud_flow])
    by_flow = _check_probes(frames, [0, 1, 2], t0, t1)
    # RC: 10 messages of 3 packets (1024, 1024, 12 bytes): the 12-byte last packets carry none
    assert len(by_flow[0]) == len(by_flow[1]) == 20
    assert len(by_flow[2]) == 50


def test_probes_ipv6_and_vlan(engine, tmp_path):
    pcap = tmp_path / "v6.pcap"
    p = port("p", "net_pcap0", MAC_A, "fd00::1", 'vdev_args = "tx_pcap=%s";' % pcap)
    f = flow("f", "p", MAC_B, "fd00::2", transport='"uc"', ops="{ write_imm = 1; }", message_size=3000, mtu=1024,
             qpn=0x10, dest_qpn=0x20, vlan=100, pcp=3, stop="{ messages = 20; }", latency='{ mode = "oneway"; }')
    t0 = time.time_ns()
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "tx")], [f]))
    assert rc == 0, out
    frames = rdpcap(str(pcap))
    assert len(frames) == 60
    by_flow = _check_probes(frames, [0], t0, time.time_ns())
    assert len(by_flow[0]) == 60


# ---- measurements between engine ports ------------------------------------------------------------

def test_oneway_between_two_ports(engine):
    ports, ip_b = pair_ports("ow")
    msgs, count = 5000, 4
    f = flow("f", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=256, qpn=0x100,
             dest_qpn=0x300, count=count, rate_gbps=1.0, stop="{ messages = %d; }" % msgs,
             latency='{ mode = "oneway"; }')
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "tx"), role(1, "b", "rx")], [f]))
    assert rc == 0, out
    for fl in rep["flows"]:
        ow = fl["latency_ns"]["oneway"]
        assert ow["count"] == msgs and fl["icrc_errors"] == 0 and fl["lost"] == 0
        assert 0 < ow["min"] <= ow["p50"] <= ow["p99"] <= ow["max"] < 10**9
        assert ow["clock_disagreements"] == 0
    b = rep["ports"][1]["latency_ns"]
    assert b["oneway"]["count"] == msgs * count and b["clock"]["source"] == "tsc"


def test_pingpong_through_the_reflect_role(engine, tmp_path):
    ports, ip_b = pair_ports("pp")
    msgs = 20000
    samples = tmp_path / "rtt.csv"
    f = flow("pp", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=64, qpn=0x10,
             dest_qpn=0x20, stop="{ messages = %d; }" % msgs, latency='{ mode = "pingpong"; }')
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "reflect")], [f],
                                  run='run = { latency_samples = "%s"; latency_sample_every = 100; };' % samples))
    assert rc == 0, out
    assert rep["stopped_by"] == "flows_done"
    (fl,) = rep["flows"]
    lat = fl["latency_ns"]
    assert lat["pingpong"] == {"sent": msgs, "lost": 0}
    assert lat["rtt"]["count"] == msgs
    assert 0 < lat["rtt"]["min"] <= lat["rtt"]["p50"] <= lat["rtt"]["p99"] <= lat["rtt"]["max"]
    assert rep["ports"][1]["reflected"] == msgs
    assert rep["ports"][0]["latency_ns"]["rtt"]["count"] == msgs
    rows = list(csv.DictReader(open(samples)))
    assert len(rows) == msgs // 100
    assert all(r["kind"] == "rtt" and int(r["latency_ns"]) == int(r["rx_ns"]) - int(r["tx_ns"]) for r in rows)
    assert lat["rtt"]["min"] <= min(int(r["latency_ns"]) for r in rows)
    assert max(int(r["latency_ns"]) for r in rows) <= lat["rtt"]["max"]


def test_rc_request_to_ack(engine):
    ports, ip_b = pair_ports("ack")
    msgs = 300
    ow = flow("w", "a", MAC_B, ip_b, transport='"rc"', ops="{ write = 1; }", message_size=4000, mtu=1024,
              qpn=0x10, dest_qpn=0x20, rate_gbps=2.0, stop="{ messages = %d; }" % msgs,
              latency='{ mode = "oneway"; }')
    pp = flow("p", "a", MAC_B, ip_b, transport='"rc"', ops="{ send = 1; }", message_size=100,
              qpn=0x30, dest_qpn=0x40, stop="{ messages = %d; }" % msgs, latency='{ mode = "pingpong"; }')
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [ow, pp]))
    assert rc == 0, out
    for fl in rep["flows"]:
        ack = fl["latency_ns"]["ack"]
        assert ack["count"] == msgs == fl["rc"]["completions"]
        assert 0 < ack["min"] <= ack["p50"] <= ack["max"]
    # the WRITEs (4 packets of 1024, 1024, 1024 and 928 bytes) also carried probes to the receiving port
    assert rep["flows"][0]["latency_ns"]["oneway"]["count"] == 4 * msgs


def test_pingpong_with_nobody_answering_counts_losses(engine):
    p = port("n", "net_null0", MAC_A, "192.168.3.1")
    f = flow("pp", "n", MAC_B, "192.168.3.2", transport='"uc"', ops="{ send = 1; }", message_size=64, qpn=2,
             dest_qpn=3, stop="{ messages = 20; }", latency='{ mode = "pingpong"; timeout_us = 2000.0; }')
    rc, rep, out = engine.run(cfg([p], [role(1, "n", "txrx")], [f]), "-d", "20")
    assert rc == 0, out
    assert rep["stopped_by"] == "flows_done" and rep["duration_s"] < 5
    lat = rep["flows"][0]["latency_ns"]
    assert lat["pingpong"] == {"sent": 20, "lost": 20} and "rtt" not in lat


def test_hardware_timestamps_refused_where_none(engine):
    ports, ip_b = pair_ports("hw")
    ports[0] = ports[0].replace("}", 'timestamps = "hardware"; }')
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "rx"), role(1, "b", "rx")], []), "-d", "1")
    assert rc == 4, out
    assert "port a" in out and "no RX timestamps" in out and rep is None


def test_unwritable_samples_path_fails_before_traffic(engine, tmp_path):
    (tmp_path / "plain").write_text("")  # a missing folder would be made: a file stands in the way
    bad = tmp_path / "plain" / "dir" / "s.csv"
    p = port("n", "net_null0", MAC_A, "192.168.3.1")
    f = flow("f", "n", MAC_B, "192.168.3.2", transport='"uc"', message_size=64, qpn=2, dest_qpn=3,
             latency='{ mode = "oneway"; }')
    rc, rep, out = engine.run(cfg([p], [role(1, "n", "tx")], [f],
                                  run='run = { latency_samples = "%s"; };' % bad), "-d", "1")
    assert rc == 5, out
    assert "run.latency_samples" in out and str(bad) in out


def test_samples_from_the_command_line(engine, tmp_path):
    """-S / --latency-sample-every override the config's run settings."""
    ports, ip_b = pair_ports("cli")
    f = flow("pp", "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=100, qpn=0x10,
             dest_qpn=0x20, stop="{ messages = 1000; }", latency='{ mode = "pingpong"; }')
    out_csv = tmp_path / "cli.csv"
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "reflect")], [f],
                                  run='run = { latency_samples = "%s"; };' % (tmp_path / "cfg.csv")),
                              "-S", out_csv, "--latency-sample-every", "10")
    assert rc == 0, out
    rows = list(csv.DictReader(open(out_csv)))
    assert len(rows) == 100 and not (tmp_path / "cfg.csv").exists()
    assert rep["flows"][0]["latency_ns"]["rtt"]["count"] == 1000

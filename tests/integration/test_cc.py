"""Congestion control in the engine (docs/cc.md): the notification point's CNPs, the reaction
point's rate, event injection and its delays, TIMELY, the trace CSV and the telemetry commands.

* One CE mark (injected by PSN) on a 10 Gb/s DCQCN flow over a ring pair: the receiver sends one
  CNP, the sender cuts exactly once to the NVIDIA formula's rate (10 Gb/s x (1 - 1023/2048),
  computed here by hand in kb/s) and recovers to line rate; the trace CSV shows the cut within a
  monitor period of the CNP.
* CE on every packet of a constant-rate flow: CNPs spaced by min_time_between_cnps, the rest
  counted as suppressed (marks = CNPs + suppressed), the spacing measured at the sender.
* The CNP frame itself, checked by scapy (ICRC, BECN, DSCP 48, PCP 6, addresses swapped, 16
  reserved bytes, the sender's QPN from the DETH of a UD request) and dissected by tshark.
* Drops and bad ICRCs injected on an RC flow draw NAKs whose delay is measured; everything is
  still delivered.
"""
import csv
import os
import subprocess
import time

from scapy.all import IP, UDP, Dot1Q, Ether, rdpcap, wrpcap
from scapy.contrib.roce import BTH

import oracle_common as oc
from conftest import engine_path
from test_control import _by_name as _by_name_telemetry, _telemetry
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role

LINE_KBPS = 10_000_000


def _run_pair(engine, flows, run="", extra_b="", roles=None, seconds=None):
    ports, _ = pair_ports()
    if extra_b:
        ports[1] = ports[1].replace("link_speed_gbps", extra_b + " link_speed_gbps")
    roles = roles or [role(1, "a", "txrx"), role(1, "b", "txrx")]
    args = ["-d", str(seconds)] if seconds else []
    rc, rep, out = engine.run(cfg(ports, roles, flows, run=run), *args)
    assert rc == 0, out
    return rep, out


def _dcqcn_flow(name="f", **kw):
    base = dict(transport='"uc"', ops="{ write = 1; }", message_size=1024, qpn=0x100, dest_qpn=0x200,
                rate_gbps=10.0, cc='"dcqcn"', stop="{ seconds = 0.3; }")
    base.update(kw)
    return flow(name, "a", MAC_B, "192.168.7.2", **base)


def _by_name(rep, name):
    return next(f for f in rep["flows"] if f["name"] == name)


def test_two_ce_marks_make_two_cnps_and_one_cut_to_the_formula(engine, tmp_path):
    """CE on PSNs 1000 and 1001 (np spacing 0): two CNPs. NVIDIA profile: the first starts alpha =
    initial_alpha_value = 1023 and the 1 us alpha / 4 us decrease periods without marking them (the
    firmware model); the second marks the periods it falls in. Alpha at the end of that decrease
    period is worked out here from the formulas (G = 1019: a -> floor(G a / 1024), + 1024 - G at
    the end of the marked alpha period, capped at 1023) with the CNPs' times from the trace; the
    cut is R_C -= min(R_C * alpha >> 11, R_C * 50 / 100). When both CNPs arrive within 4 us (the
    usual case) alpha is 1008 wherever the mark falls: 10 Gb/s -> 5.078125 Gb/s."""
    trace = tmp_path / "cc.csv"
    rep, out = _run_pair(engine, [_dcqcn_flow(inject='( { action = "ce"; psn = 1000; }, { action = "ce"; psn = 1001; } )')],
                         run='run = { cc_trace = "%s"; cc_trace_interval_us = 50.0; };' % trace,
                         extra_b="np = { min_time_between_cnps = 0; };")
    f = _by_name(rep, "f")
    assert f["ecn_ce"] == 2 and f["cnp_tx"] == 2 and f["cnp_suppressed"] == 0, f
    assert f["cnp_rx"] == 2 and f["cc"]["cnps"] == 2 and f["cc"]["cuts"] == 1, f
    rows = list(csv.DictReader(trace.open()))
    cnp = [r for r in rows if r["event"] == "cnp"]
    assert len(cnp) == 2 and float(cnp[0]["alpha"]) == round(1023 / 1024, 6), cnp
    gap = int(cnp[1]["time_ns"]) - int(cnp[0]["time_ns"])
    marked, dec_end = gap // 1000, (gap // 4000 + 1) * 4  # alpha period of the mark; the cut's period end
    alpha = 1023
    for j in range(dec_end):
        alpha = min(1023, alpha * 1019 // 1024 + (1024 - 1019 if j == marked else 0))
    cut = min(LINE_KBPS * alpha >> 11, LINE_KBPS * 50 // 100)
    assert round(f["cc"]["min_rate_gbps"] * 1e6) == LINE_KBPS - cut, (f["cc"], gap, alpha)
    if gap < 4000:
        assert alpha == 1008 and LINE_KBPS - cut == 5_078_125
    assert f["cc"]["rate_gbps"] >= 9.99, f["cc"]  # recovered (300 us timer, 0.3 s)
    inj = f["inject"]
    assert inj["ce_marked"] == 2 and inj["cnp_delay_ns"]["count"] >= 1
    ev = inj["events"]
    assert [e["psn"] for e in ev] == [1000, 1001] and ev[0]["action"] == "ce"
    assert 0 < ev[0]["answer_delay_ns"] < 5_000_000, ev
    assert rep["ports"][1]["np"]["cnp_tx"] == 2 and rep["ports"][1]["np"]["no_peer"] == 0
    assert rows and set(rows[0]) == {"time_ns", "qp", "event", "rate_gbps", "target_gbps", "alpha", "stage", "cnps",
                                     "cuts"}
    cut_row = next(r for r in rows if r["cuts"] == "1")
    assert float(cut_row["rate_gbps"]) <= (LINE_KBPS - cut) / 1e6 + 1e-6 and int(cut_row["time_ns"]) >= int(cnp[1]["time_ns"])
    assert float(rows[0]["rate_gbps"]) == 10.0
    assert max(float(r["rate_gbps"]) for r in rows) <= 10.0


def test_rate_to_set_on_first_cnp(engine):
    """rate_to_set_on_first_cnp = 4000 Mb/s: one CNP sets current and target rate to exactly 4 Gb/s
    (no cut), the rate then climbs back by additive and hyper steps."""
    rep, _ = _run_pair(engine, [_dcqcn_flow(inject='( { action = "ce"; psn = 1000; } )',
                                            dcqcn="{ rate_to_set_on_first_cnp = 4000; }")])
    c = _by_name(rep, "f")["cc"]
    assert c["cnps"] == 1 and c["cuts"] == 0 and c["min_rate_gbps"] == 4.0, c
    assert 4.0 < c["rate_gbps"] <= 10.0 and c["increase_events"]["timer"] > 100, c


def test_ce_on_every_packet_cnps_keep_min_time_between_cnps(engine):
    """cc off at the sender (constant 1 Gb/s), every packet CE: the receiver's CNPs come at most one
    per 100 us; marks = CNPs + suppressed."""
    f = _dcqcn_flow(cc='"none"', rate_gbps=1.0, inject='( { action = "ce"; every = 1; } )',
                    stop="{ seconds = 0.2; }")
    rep, out = _run_pair(engine, [f], extra_b="np = { min_time_between_cnps = 100; };")
    f = _by_name(rep, "f")
    np_b = rep["ports"][1]["np"]
    assert f["ecn_ce"] == f["tx_packets"] > 20000, f
    assert f["cnp_tx"] + f["cnp_suppressed"] == f["ecn_ce"], f
    assert np_b["cnp_tx"] == f["cnp_tx"] and np_b["min_time_between_cnps_us"] == 100
    # 0.2 s / (100 us rounded up to the next marked packet, 8.5 us apart)
    # (a loaded two-core VM delays the receiving loop now and then: the lower bound is loose; the
    # upper bound is the notification point's rule and holds whatever the load)
    assert 0.2e6 / 110 * 0.4 < f["cnp_tx"] <= 0.2e6 / 100 + 1, f["cnp_tx"]
    assert f["cnp_rx"] == f["cnp_tx"]
    sp = f["inject"]["cnp_spacing_ns"]
    assert sp["count"] == f["cnp_tx"] - 1 and sp["mean"] >= 95_000, sp


def test_np_off_sends_no_cnp(engine):
    f = _dcqcn_flow(cc='"none"', rate_gbps=1.0, inject='( { action = "ce"; every = 10; } )', stop="{ seconds = 0.05; }")
    rep, _ = _run_pair(engine, [f], extra_b="np = { enabled = false; };")
    f = _by_name(rep, "f")
    assert f["ecn_ce"] > 100 and f["cnp_tx"] == 0 and f["cnp_rx"] == 0
    assert rep["ports"][1]["np"]["enabled"] is False


def test_dcqcn_holds_the_rate_down_under_steady_marking(engine):
    """CE on one packet in 20: the sender's rate is held well below what the same flow unmarked
    beside it sends, CNPs and cuts keep coming, and the rate never goes under rpg_min_rate."""
    f = _dcqcn_flow(inject='( { action = "ce"; every = 20; } )', stop="{ seconds = 0.3; }",
                    dcqcn="{ rpg_min_rate = 100; }")
    # the same flow unmarked, beside it on the same lcore: what the machine carried at 10 Gb/s
    g = _dcqcn_flow("g", qpn=0x101, dest_qpn=0x201, stop="{ seconds = 0.3; }")
    rep, _ = _run_pair(engine, [f, g])
    c = _by_name(rep, "f")["cc"]
    assert c["cnps"] > 100 and c["cuts"] > 50, c
    assert 0.1 <= c["min_rate_gbps"] < 5.0, c
    assert c["increase_events"]["timer"] > 0 and c["increase_events"]["fast_recovery"] > 0, c
    assert _by_name(rep, "g")["cc"]["cnps"] == 0
    marked, unmarked = (_by_name(rep, n)["tx_bytes"] for n in ("f", "g"))
    held_ms = sum(l["held_up_ms"] for l in rep["lcores"])
    # measured 0.13-0.21 of the unmarked flow. While the lcore is held up no CNP comes, and DCQCN's
    # timer raises the rate as if the marking had stopped (0.29-0.53 with 105-154 ms of the 300
    # held up, under two busy loops); a loop too slow for 10 Gb/s (the ASan build: the unmarked
    # flow at 6.5-7.7 Gb/s) reads the marks late, a poll's at once, and answers fewer (0.38-0.64).
    # The half holds when the machine let the loop run and carried the unmarked flow's 10 Gb/s.
    carried = unmarked * 8 / 0.3 / 1e9 >= 9.5
    assert marked < 0.9 * unmarked, (marked, unmarked)
    assert marked < 0.5 * unmarked or held_ms > 2 or not carried, (marked, unmarked, held_ms)


def _pcap_port(tmp_path, frames, extra=""):
    pcap_in = tmp_path / "in.pcap"
    wrpcap(str(pcap_in), frames)
    out = tmp_path / "out.pcap"
    return port("p", "net_pcap0", MAC_A, "192.168.1.1",
                'vdev_args = "rx_pcap=%s,tx_pcap=%s"; %s' % (pcap_in, out, extra)), out


def _ud_send(psn, ecn, vlan=None):
    l2 = Ether(src=MAC_B, dst=MAC_A)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan, prio=3)
    # UD SEND ONLY (opcode 0x64): BTH, DETH (Q_Key, source QP 0xABCDE), 64 bytes of payload
    deth = bytes.fromhex("11111111") + bytes.fromhex("000ABCDE")
    return (l2 / IP(src="192.168.1.2", dst="192.168.1.1", tos=(26 << 2) | ecn) / UDP(sport=49152, dport=4791) /
            BTH(opcode=0x64, dqpn=0x77, psn=psn) / (deth + bytes(64)))


def test_cnp_frame_checked_by_scapy_and_tshark(engine, tmp_path):
    frames = [_ud_send(i, 3 if i in (2, 5) else 2, vlan=9 if i == 5 else None) for i in range(8)]
    p, out = _pcap_port(tmp_path, frames, "np = { min_time_between_cnps = 0; };")
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "txrx")], []), "-d", "0.5")
    assert rc == 0, text
    cnps = [f for f in rdpcap(str(out)) if BTH in f and f[BTH].opcode == 0x81]
    assert len(cnps) == 2, rdpcap(str(out))
    for c, tagged in zip(cnps, (False, True)):
        assert c[Ether].src == MAC_A and c[Ether].dst == MAC_B
        assert c[IP].src == "192.168.1.1" and c[IP].dst == "192.168.1.2"
        assert c[IP].tos >> 2 == 48 and c[IP].tos & 3 == 0 and c[IP].flags.DF
        assert c[UDP].dport == 4791 and c[UDP].sport == 49152 and c[UDP].len == 8 + 12 + 16 + 4
        assert c[BTH].becn == 1 and c[BTH].fecn == 0 and c[BTH].dqpn == 0xABCDE and c[BTH].psn == 0
        assert c[BTH].pkey == 0xFFFF
        assert (Dot1Q in c) == tagged and (not tagged or (c[Dot1Q].prio == 6 and c[Dot1Q].vlan == 9))
        # the ICRC: scapy recomputes it from scratch, and so does the suite's own rxe-style code
        t = bytes(c)
        q = Ether(t).copy()
        q[BTH].icrc = None
        assert bytes(q) == t, (bytes(q)[-4:].hex(), t[-4:].hex())
        l3 = t[18 if tagged else 14:-4]
        assert oc.icrc_v2(l3) == int.from_bytes(t[-4:], "little")
        assert t[-20:-4] == bytes(16)  # the CNP's 16 reserved bytes
    t = subprocess.run(["tshark", "-r", str(out), "-d", "udp.port==4791,infiniband", "--disable-protocol", "tftp",
                        "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.p_key",
                        "-e", "infiniband.bth.destqp", "-e", "ip.dsfield.dscp", "-e", "ip.dsfield.ecn"],
                       capture_output=True, text=True, timeout=60)
    rows = [line.split("\t") for line in t.stdout.splitlines() if line.startswith("129")]
    assert len(rows) == 2, t.stdout + t.stderr
    for r in rows:
        assert int(r[1], 0) == 0xFFFF and int(r[2], 0) == 0xABCDE and r[3] == "48" and r[4] == "0", r
    assert rep["ports"][0]["np"]["cnp_tx"] == 2


def test_rc_drop_and_bad_icrc_draw_naks_whose_delay_is_measured(engine):
    f = flow("r", "a", MAC_B, "192.168.7.2", transport='"rc"', ops="{ write = 1; }", message_size=4096, mtu=1024,
             qpn=0x10, dest_qpn=0x20, rate_gbps=2.0, stop="{ messages = 2000; }",
             inject='( { action = "drop"; psn = 500; }, { action = "corrupt"; psn = 3000; } )')
    rep, out = _run_pair(engine, [f])
    r = _by_name(rep, "r")
    inj = r["inject"]
    assert inj["dropped"] == 1 and inj["corrupted"] == 1, inj
    assert r["rc"]["naks_rx"] >= 2 and r["rc"]["retransmits"] >= 2, r["rc"]
    assert inj["nak_delay_ns"]["count"] == 2 and 0 < inj["nak_delay_ns"]["max"] < 10_000_000, inj
    assert [e["psn"] for e in inj["events"]] == [500, 3000] and all(e["answer_delay_ns"] for e in inj["events"])
    assert r["icrc_errors"] == 1
    assert r["rc"]["completions"] == 2000 and r["rx_messages"] == 2000


def test_rx_inject_marks_arrivals_and_drives_the_loop(engine):
    """The receiving port marks one arrival in 50 itself (rx_inject): CNPs flow back, the sender cuts."""
    rep, _ = _run_pair(engine, [_dcqcn_flow(stop="{ seconds = 0.1; }")],
                       extra_b='rx_inject = ( { action = "ce"; every = 50; } );')
    f = _by_name(rep, "f")
    b = rep["ports"][1]
    assert b["rx_inject"]["ce_marked"] == f["ecn_ce"] > 10 and f["cnp_tx"] > 10
    assert f["cc"]["cuts"] > 5 and f["cc"]["min_rate_gbps"] < 9.0


def test_timely_follows_rtt_samples(engine):
    """RC with TIMELY; t_high 1 us: samples above it cut, rate *= 1 - beta (1 - t_high / rtt),
    down to min_rate. Round trips in one process now often come in under 1 us (then the gradient
    mode adds delta), so delta is 0 here: only the cuts move the rate."""
    f = flow("t", "a", MAC_B, "192.168.7.2", transport='"rc"', ops="{ write = 1; }", message_size=1024,
             qpn=0x10, dest_qpn=0x20, rate_gbps=10.0, cc='"timely"', stop="{ seconds = 0.2; }",
             timely="{ t_low_us = 0; t_high_us = 1; min_rate_mbps = 500; delta_mbps = 0; }")
    rep, _ = _run_pair(engine, [f])
    c = _by_name(rep, "t")["cc"]
    s = c["rtt_samples"]
    assert s["samples"] > 100 and s["above_t_high"] > 50 and s["decreases"] > 50, c
    assert abs(c["min_rate_gbps"] - 0.5) < 1e-6 and c["rate_gbps"] < 1.0, c


def test_cc_state_and_parameters_through_telemetry(tmp_path):
    prefix = "roce-cc-%d" % os.getpid()
    ports, _ = pair_ports("cct")
    f = _dcqcn_flow(stop="{ seconds = 2.5; }", count=3, inject='( { action = "ce"; every = 100; } )')
    text = cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f],
               eal='lcores = "0-1"; memory_mb = 256; file_prefix = "%s";' % prefix)
    (tmp_path / "c.cfg").write_text(text)
    proc = subprocess.Popen([str(engine_path()), "-f", str(tmp_path / "c.cfg"), "-q", "-r", str(tmp_path / "r.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        end = time.monotonic() + 10
        while True:  # until the first CNPs came back (a loaded machine or the ASan build starts late)
            cc = _telemetry(prefix, "/roce/cc")["/roce/cc"]
            g = _by_name_telemetry(cc["flows"])["f"]
            if g["cnps"] > 0 or time.monotonic() > end or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert g["algorithm"] == "dcqcn" and g["profile"] == "nvidia" and g["qps"] == 3, g
        assert set(g["first_qps"]) == {"0", "1", "2"} and g["cnps"] > 0, g
        assert float(g["rate_max_gbps"]) <= 10.0 and "b" in _by_name_telemetry(cc["notification_points"])
        one = _telemetry(prefix, "/roce/cc,f")["/roce/cc"]
        assert one["parameters"]["rpg_ai_rate"] == "5" and one["parameters"]["rpg_gd"] == "11", one
        got = _telemetry(prefix, "/roce/cc_set,f,rpg_ai_rate,7")["/roce/cc_set"]
        assert got == {"flow": "f", "parameter": "rpg_ai_rate", "value": "7"}
        assert _telemetry(prefix, "/roce/cc,f")["/roce/cc"]["parameters"]["rpg_ai_rate"] == "7"
        assert "out of range" in _telemetry(prefix, "/roce/cc_set,f,rpg_gd,40")["/roce/cc_set"]["error"]
        assert "no parameter" in _telemetry(prefix, "/roce/cc_set,f,nope,1")["/roce/cc_set"]["error"]
        assert "no flow group" in _telemetry(prefix, "/roce/cc_set,zz,rpg_gd,4")["/roce/cc_set"]["error"]
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out

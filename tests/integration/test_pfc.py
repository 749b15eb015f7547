"""PFC honoured and generated, on virtual devices (docs/qos.md).

* PFC frames made by scapy and fed in through net_pcap pause exactly the priorities they name, for
  their quanta x 512 bit times at the port's link speed, while other priorities keep flowing; the
  report's paused_ns is the pause time, pfc_rx counts the frames per priority.
* The engine's PFC generator, between two engine ports: the receiving port's priority 3 stops for
  the pause (seen in the send times of its probes, sample by sample) while priority 0 flows on.
* The generator's frames, written to a capture, are dissected by tshark with the intended
  class-enable vector, pause times and count; 802.3x PAUSE pauses every priority.
"""
import csv
import json
import subprocess

from scapy.all import Ether, rdpcap, wrpcap
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause

from conftest import on_cpu_share
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role


def _flow(name, port_name, dscp, qpn, pps, seconds, extra=None):
    kw = dict(transport='"uc"', ops="{ write = 1; }", message_size=64, qpn=qpn, dest_qpn=qpn + 0x1000,
              dscp=dscp, rate_pps=pps, stop="{ seconds = %s; }" % seconds)
    kw.update(extra or {})
    return flow(name, port_name, MAC_B, "192.168.1.2", **kw)


def _pcap_port(tmp_path, frames, qos=""):
    """Port p on net_pcap: `frames` (scapy) fed in, what it sends written to out.pcap; 0.1 Gb/s."""
    pcap_in = tmp_path / "in.pcap"
    wrpcap(str(pcap_in), frames)
    out = tmp_path / "out.pcap"
    return port("p", "net_pcap0", MAC_A, "192.168.1.1",
                'vdev_args = "rx_pcap=%s,tx_pcap=%s"; %s' % (pcap_in, out, qos)).replace("100.0", "0.1"), out


def _pfc(**fields):
    return Ether(src="02:00:00:00:00:99", dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(**fields)


def _first_and_gap(times):
    gaps = [b - a for a, b in zip(times, times[1:])]
    return times[0], max(gaps) if gaps else 0


def test_scapy_pfc_through_pcap_pauses_the_named_priorities(engine, tmp_path):
    """Two PFC frames (scapy): priority 3 for 65535 quanta and priority 5 for 20000, on a port
    whose link speed is 0.1 Gb/s (a quantum is 5.12 us): 335.5 ms and 102.4 ms. Flows on
    priorities 0, 3 and 5 (DSCP 0, 26, 40) send 20 kpps each for 0.6 s."""
    p, out = _pcap_port(tmp_path, [_pfc(c3_enabled=1, c3_pause_time=65535), _pfc(c5_enabled=1, c5_pause_time=20000)])
    flows = [_flow("p0", "p", 0, 0x10, 20000, 0.6), _flow("p3", "p", 26, 0x20, 20000, 0.6),
             _flow("p5", "p", 40, 0x30, 20000, 0.6)]
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "txrx")], flows))
    assert rc == 0, text
    pr = rep["ports"][0]
    assert pr["pfc_rx"] == [0, 0, 0, 1, 0, 1, 0, 0]
    assert pr["pfc_rx_xoff"] == [0, 0, 0, 1, 0, 1, 0, 0]
    q = 512 / 0.1e9 * 1e9  # ns a quantum
    for prio, quanta in ((3, 65535), (5, 20000)):
        assert abs(pr["paused_ns"][prio] - quanta * q) < 2000, pr["paused_ns"]
    assert [pr["paused_ns"][i] for i in (0, 1, 2, 4, 6, 7)] == [0] * 6
    times = {0: [], 3: [], 5: []}
    for fr in rdpcap(str(out)):
        b = bytes(fr)
        times[(b[15] >> 2) >> 3].append(float(fr.time))
    start = times[0][0]
    first0, gap0 = _first_and_gap(times[0])
    assert gap0 < 0.05, "priority 0 must keep flowing (largest gap %.4f s)" % gap0
    # the pause began when the frames were read, at most ~30 ms before the flows' start
    for prio, pause_s in ((3, 65535 * q / 1e9), (5, 20000 * q / 1e9)):
        first = times[prio][0] - start
        assert pause_s - 0.06 < first < pause_s * 1.1, (prio, first, pause_s)
        assert _first_and_gap(times[prio])[1] < 0.05  # and then it flows at its rate
    assert pr["tx_priority_packets"][0] == len(times[0]) and pr["tx_priority_packets"][3] == len(times[3])


def test_generator_pauses_the_peer_priority_for_the_quanta(engine, tmp_path):
    """Port b's generator sends one PFC frame for priority 3 (65535 quanta) 0.1 s into the run;
    port a (0.1 Gb/s configured: 335.5 ms, long beside a loaded VM's stalls) pauses its
    priority-3 flow, the priority-0 flow goes on.
    The probes' send times (CSV, every sample) show the gap."""
    ports, ip_b = pair_ports("pfcgen")
    ports = [p.replace("100.0", "0.1") for p in ports]
    samples = tmp_path / "s.csv"
    lat = {"latency": '{ mode = "oneway"; }'}
    flows = [flow("lo", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=64, qpn=0x10,
                  dest_qpn=0x110, dscp=0, rate_pps=20000, stop="{ seconds = 0.7; }", **lat),
             flow("hi", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=64, qpn=0x20,
                  dest_qpn=0x120, dscp=26, rate_pps=20000, stop="{ seconds = 0.7; }", **lat)]
    gen = 'pfc_generators = ( { port = "b"; priorities = [3]; quanta = 65535; rate_pps = 10.0; count = 1; start_s = 0.1; } );'
    rc, rep, text = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], flows,
                                   run=gen + '\nrun = { latency_samples = "%s"; };' % samples))
    assert rc == 0, text
    a, b = rep["ports"]
    assert b["pfc_tx"] == [0, 0, 0, 1, 0, 0, 0, 0] and a["pfc_rx"] == [0, 0, 0, 1, 0, 0, 0, 0]
    pause_ns = 65535 * 5120
    assert abs(a["paused_ns"][3] - pause_ns) < 20000
    tx = {0x110: [], 0x120: []}
    flow_qpn = {0: 0x110, 1: 0x120}
    for r in csv.DictReader(open(samples)):
        tx[flow_qpn[int(r["flow"])]].append(int(r["tx_ns"]))
    lo, hi = sorted(tx[0x110]), sorted(tx[0x120])
    gap_hi = max(y - x for x, y in zip(hi, hi[1:]))
    gap_lo = max(y - x for x, y in zip(lo, lo[1:]))
    assert abs(gap_hi - pause_ns) < 0.1 * pause_ns, (gap_hi, pause_ns)
    assert gap_lo < pause_ns / 3, gap_lo  # priority 0 kept flowing (a loaded VM may stall it a few ms)
    # no credit for the pause: the paused flow sent that much less
    f = {fl["name"]: fl for fl in rep["flows"]}
    assert f["lo"]["tx_packets"] - f["hi"]["tx_packets"] > 0.8 * 20000 * pause_ns / 1e9


def test_generator_frames_dissected_by_tshark(engine, tmp_path):
    out = tmp_path / "gen.pcap"
    p = port("p", "net_pcap0", MAC_A, "192.168.1.1", 'vdev_args = "tx_pcap=%s";' % out)
    gens = ('pfc_generators = ( { port = "p"; priorities = [3, 4]; quanta = 1000; rate_pps = 1000.0; count = 50; } );')
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "tx")], [], run=gens), "-d", "5")
    assert rc == 0, text
    assert rep["stopped_by"] == "flows_done"
    assert rep["ports"][0]["pfc_tx"] == [0, 0, 0, 50, 50, 0, 0, 0]
    fields = ["eth.dst", "eth.src", "macc.opcode", "macc.cbfc.enbv"] + ["macc.cbfc.pause_time.c%d" % i for i in range(8)]
    cmd = ["tshark", "-r", str(out), "-T", "fields", "-E", "separator=,"] + sum((["-e", f] for f in fields), [])
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    assert len(lines) == 50
    for line in lines:
        v = line.split(",")
        assert v[0] == "01:80:c2:00:00:01" and v[1] == MAC_A
        assert int(v[2], 0) == 0x0101 and int(v[3], 0) == 0x18
        assert [int(x, 0) for x in v[4:]] == [0, 0, 0, 1000, 1000, 0, 0, 0]
    times = [float(fr.time) for fr in rdpcap(str(out))]
    rate = (len(times) - 1) / (times[-1] - times[0])
    assert 800 < rate < 1250, rate


def test_classic_pause_pauses_every_priority(engine, tmp_path):
    p, out = _pcap_port(tmp_path, [Ether(src="02:00:00:00:00:99", dst="01:80:c2:00:00:01") /
                                   MACControlPause(pause_time=65535)])
    flows = [_flow("p0", "p", 0, 0x10, 20000, 0.5), _flow("p3", "p", 26, 0x20, 20000, 0.5)]
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "txrx")], flows))
    assert rc == 0, text
    pr = rep["ports"][0]
    assert pr["pause_rx"] == 1
    assert all(abs(v - 65535 * 5120) < 2000 for v in pr["paused_ns"]), pr["paused_ns"]
    assert sum(pr["tx_priority_packets"]) < 2 * 20000 * (0.5 - 0.3)  # both waited ~0.33 s of 0.5


def test_port_that_does_not_honour_pfc_keeps_sending(engine, tmp_path):
    p, _ = _pcap_port(tmp_path, [_pfc(c3_enabled=1, c3_pause_time=65535)], "qos = { honour_pfc = false; };")
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "txrx")], [_flow("p3", "p", 26, 0x20, 20000, 0.3)]))
    assert rc == 0, text
    pr = rep["ports"][0]
    assert pr["pfc_rx"][3] == 1 and pr["paused_ns"][3] == 0 and not pr["honour_pfc"]
    assert abs(pr["tx_priority_packets"][3] - 20000 * 0.3) < 0.05 * 20000 * 0.3


def test_trust_pcp_classifies_by_the_vlan_tag(engine, tmp_path):
    p, _ = _pcap_port(tmp_path, [_pfc(c5_enabled=1, c5_pause_time=65535)], 'qos = { trust = "pcp"; };')
    # DSCP 26 would be priority 3; with trust pcp the tag's PCP 5 decides
    f = _flow("v5", "p", 26, 0x20, 20000, 0.5, {"vlan": 100, "pcp": 5})
    g = _flow("v1", "p", 26, 0x30, 20000, 0.5, {"vlan": 100, "pcp": 1})
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "txrx")], [f, g]))
    assert rc == 0, text
    pr = rep["ports"][0]
    assert pr["tx_priority_packets"][3] == 0
    assert pr["tx_priority_packets"][5] < pr["tx_priority_packets"][1] * 0.5


def _xoff_run(engine, honour):
    ports, ip_b = pair_ports("xoff")
    ports = [p.replace("100.0", "10.0") for p in ports]
    ports[1] = ports[1].replace("}", 'qos = { pfc_xoff = { priorities = [3]; xoff_bytes = 200000; xon_bytes = 100000; '
                                     'drain_gbps = 1.0; }; }; }')
    if not honour:
        ports[0] = ports[0].replace("}", "qos = { honour_pfc = false; }; }")
    flows = [flow(name, "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1024, qpn=qpn,
                  dest_qpn=qpn + 0x10, dscp=dscp, rate_gbps=2.0, stop="{ seconds = 1.0; }")
             for name, qpn, dscp in (("hi", 0x10, 26), ("lo", 0x30, 0))]
    rc, rep, text = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], flows))
    assert rc == 0, text
    return rep


def test_rx_thresholds_generate_xoff_and_xon(engine):
    """Port b watches priority 3: its backlog drains at 1 Gb/s while a sends 2 Gb/s on priority 3
    (and 2 Gb/s on priority 0). Above 200 KB b sends XOFF, at 100 KB XON; a honours them, so its
    priority-3 flow alternates (about half the time paused) and priority 0 is untouched."""
    rep = _xoff_run(engine, True)
    a, b = rep["ports"]
    x = b["pfc_xoff"]
    assert x["episodes"][3] > 20 and [x["episodes"][i] for i in (0, 1, 2, 4, 5, 6, 7)] == [0] * 7
    assert abs(x["xoff_sent"][3] - x["xon_sent"][3]) <= 1 and x["xoff_sent"][3] >= x["episodes"][3]
    assert b["pfc_tx"][3] == x["xoff_sent"][3] + x["xon_sent"][3] == a["pfc_rx"][3]
    assert 200000 < x["max_backlog_bytes"][3] < 200000 + 100000
    # what a still sent after each XOFF: a burst at most, not a stream (in time: 5 ms, plus the
    # longest time the machine held the lcore up, when a's TX could not see the pause)
    held = max(l["longest_held_up_ms"] for l in rep["lcores"]) * 1e6
    assert 0 < x["response_bytes_max"][3] < 100000 and 0 < x["response_ns_max"][3] < 5_000_000 + held
    assert 0.3e9 < a["paused_ns"][3] < 0.8e9, a["paused_ns"]
    f = {fl["name"]: fl["tx_bytes"] * 8 / 1e9 for fl in rep["flows"]}  # 1 s of sending
    assert 0.5 < f["hi"] < 1.3 and f["lo"] > 1.9, f


def test_pause_response_of_a_peer_that_ignores_pfc(engine):
    """The same with a port a that does not honour PFC: XOFF is refreshed and the response (bytes
    still arriving after XOFF) grows to what a sends in the whole episode."""
    rep = _xoff_run(engine, False)
    a, b = rep["ports"]
    x = b["pfc_xoff"]
    assert a["paused_ns"][3] == 0 and a["pfc_rx"][3] == b["pfc_tx"][3]
    assert x["xoff_sent"][3] > x["episodes"][3]  # refreshes: the backlog never fell to XON
    assert x["max_backlog_bytes"][3] > 1_000_000
    assert x["response_bytes_max"][3] > 1_000_000 or x["backlog_bytes"][3] > 1_000_000


def test_nic_pfc_where_the_pmd_has_none_is_said_at_start(engine):
    ports, ip_b = pair_ports("nicpfc")
    ports[0] = ports[0].replace("}", "qos = { nic_pfc = true; }; }")
    rc, rep, text = engine.run(cfg(ports, [role(1, "a", "rx"), role(1, "b", "rx")], []), "-d", "0.5")
    assert rc == 0, text
    assert "port a: net_ring cannot set the NIC's PFC" in text and "handled by the engine in software" in text
    assert rep["ports"][0]["nic_pfc"].startswith("not available") and rep["ports"][1]["nic_pfc"] == "off"


# ---- egress scheduling ---------------------------------------------------------------------------

def _egress_run(engine, egress, extra_flows=(), seconds=2):
    p = port("n", "net_null0", MAC_A, "192.168.1.1", "qos = { egress = { %s }; };" % egress)
    flows = [flow("c%d" % c, "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x10 + 0x10 * c, dest_qpn=0x100 + 0x10 * c, count=2, dscp=8 * c) for c in range(3)]
    rc, rep, text = engine.run(cfg([p], [role(1, "n", "tx")], flows + list(extra_flows)), "-d", str(seconds))
    assert rc == 0, text
    e = rep["ports"][0]["egress"]
    gbps = [(b + 24 * k) * 8 / rep["duration_s"] / 1e9 for b, k in zip(e["tc_bytes"], e["tc_packets"])]
    return rep, e, gbps


def test_ets_weights_share_the_egress_within_2_percent(engine):
    """Three saturated classes (priorities 0, 1, 2: two unpaced QPs each) behind a 2 Gb/s egress
    with ETS weights 5:3:2: byte shares within 2% of 0.5, 0.3 and 0.2, the egress at its rate."""
    rep, e, gbps = _egress_run(engine, "shape_gbps = 2.0; weights = [5, 3, 2, 1, 1, 1, 1, 1];")
    total = sum(e["tc_bytes"])
    for c, want in ((0, 0.5), (1, 0.3), (2, 0.2)):
        assert abs(e["tc_bytes"][c] / total - want) < 0.02 * want, e["tc_bytes"]
    assert abs(sum(gbps) - 2.0 * on_cpu_share(rep)) < 0.05 * 2.0, (gbps, rep["lcores"])
    assert e["weights"] == [5, 3, 2, 1, 1, 1, 1, 1] and e["strict"] == []


def test_strict_class_first_then_ets_and_a_class_shaper(engine):
    """Priority 6 is strict (a 0.5 Gb/s paced flow): it gets all it asks; the ETS classes share
    the rest 5:3:2, class 2 under its own 0.1 Gb/s shaper (its unused share goes to the others)."""
    strict = flow("c6", "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x70, dest_qpn=0x170, dscp=48, rate_gbps=0.5)
    rep, e, gbps = _egress_run(engine, "shape_gbps = 2.0; strict = [6]; weights = [5, 3, 2, 1, 1, 1, 1, 1]; "
                               "tc_shape_gbps = [0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0];", [strict])
    frame = 1000 + 70
    assert abs(gbps[6] - 0.5 * (frame + 24) / (frame + 4)) < 0.03, gbps  # its own pacing counts the FCS only
    assert abs(gbps[2] - 0.1 * (frame + 24) / frame * on_cpu_share(rep)) < 0.01, gbps  # the class shaper counts frame bytes
    rest = sum(gbps) - gbps[6] - gbps[2]
    assert abs(gbps[0] / rest - 5 / 8) < 0.02 * 5 / 8 and abs(gbps[1] / rest - 3 / 8) < 0.02 * 3 / 8, gbps
    assert abs(sum(gbps) - 2.0 * on_cpu_share(rep)) < 0.05 * 2.0, (gbps, rep["lcores"])


def test_phases_reallocate_bandwidth_and_report_each(engine):
    """A training phase (class 3 weight 9 against class 1 weight 1), then a checkpoint phase at
    1 s (weights 1 and 3, the checkpoint flow's rate raised from 0.05 to 5 Gb/s): the report gives
    each phase's span and what each flow group and class sent in it. (In training the checkpoint
    flow asks for half its class's share, 0.1 of the 2 Gb/s: at its share exactly, a DRR turn that
    came when neither of its QPs was due would cost it what it asked.)"""
    p = port("n", "net_null0", MAC_A, "192.168.1.1", "qos = { egress = { shape_gbps = 2.0; }; };")
    flows = [flow("allreduce", "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x10, dest_qpn=0x20, count=2, dscp=24),
             flow("ckpt", "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x30, dest_qpn=0x40, count=2, dscp=8, rate_gbps=0.05)]
    phases = ('phases = ( { name = "train"; at_s = 0.0; egress = ( { port = "n"; tc = 3; weight = 9; } ); },\n'
              '  { name = "checkpoint"; at_s = 1.0; egress = ( { port = "n"; tc = 3; weight = 1; }, '
              '{ port = "n"; tc = 1; weight = 3; } ); rates = ( { flow = "ckpt"; gbps = 5.0; } ); } );')
    rc, rep, text = engine.run(cfg([p], [role(1, "n", "tx")], flows, run=phases), "-d", "2")
    assert rc == 0, text
    train, ckpt = rep["phases"]
    assert (train["name"], ckpt["name"]) == ("train", "checkpoint")
    assert abs(train["start_s"]) < 0.05 and abs(ckpt["start_s"] - 1.0) < 0.05 and abs(ckpt["end_s"] - 2.0) < 0.1
    assert train["end_s"] == ckpt["start_s"]
    # training: the checkpoint flow is held to its 0.05 Gb/s per QP, all-reduce takes the rest
    assert abs(train["flows"]["ckpt"]["gbps"] - 0.1) < 0.01
    # (less the link time the machine took: the egress's cpu_lost_ms, all of it in training at worst)
    lost_s = rep["ports"][0]["egress"]["cpu_lost_ms"] / 1e3
    span = train["end_s"] - train["start_s"]
    assert train["flows"]["allreduce"]["gbps"] > 1.6 * max(0.0, 1 - lost_s / span), (train, lost_s)
    # checkpoint: both saturate, weights 1 (class 3) : 3 (class 1)
    tc = ckpt["ports"]["n"]["tc_bytes"]
    assert abs(tc[1] / (tc[1] + tc[3]) - 0.75) < 0.02 * 0.75, tc


def test_priority_to_class_to_tx_queue(engine):
    """Priority 3 is mapped to class 1 and class 1 to TX queue 1: the RoCE QPs go out of queue 1
    (the PMD's per-queue counters say so), the others out of queue 0."""
    p = port("n", "net_null0", MAC_A, "192.168.1.1",
             "tx_queues = 2; qos = { priority_to_tc = [0, 0, 0, 1, 0, 0, 0, 0]; tc_to_queue = [0, 1, 0, 0, 0, 0, 0, 0]; };")
    flows = [flow("roce", "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x10, dest_qpn=0x20, count=3, dscp=26, stop="{ messages = 1000; }"),
             flow("bg", "n", MAC_B, "192.168.1.2", transport='"uc"', ops="{ write = 1; }", message_size=1000,
                  qpn=0x30, dest_qpn=0x40, count=2, dscp=0, stop="{ messages = 500; }")]
    rc, rep, text = engine.run(cfg([p], [role(1, "n", "tx", 0), role(1, "n", "tx", 1)], flows))
    assert rc == 0, text
    x = rep["ports"][0]["xstats"]
    assert (x["tx_q0_packets"], x["tx_q1_packets"]) == (1000, 3000)
    assert rep["ports"][0]["tx_priority_packets"][3] == 3000


def test_class_mapped_to_a_queue_nobody_polls_fails_at_start(engine):
    p = port("n", "net_null0", MAC_A, "192.168.1.1", "tx_queues = 2; qos = { tc_to_queue = [0, 0, 0, 1, 0, 0, 0, 0]; };")
    f = flow("roce", "n", MAC_B, "192.168.1.2", transport='"uc"', message_size=100, qpn=0x10, dest_qpn=0x20, dscp=26)
    rc, rep, text = engine.run(cfg([p], [role(1, "n", "tx", 0)], [f]), "-d", "1")
    assert rc == 4, text
    assert "flows.roce: port n has no TX role on the queue its traffic class maps to" in text


def test_rc_answers_wait_while_their_priority_is_paused(engine):
    """Port a's generator pauses priority 3 on port b (0.1 Gb/s: 335.5 ms) at 0.1 s; b's RC
    responder answers a's priority-3 WRITEs with ACKs of the same priority, which wait out the
    pause (nothing dropped): the slowest request -> ACK time is about the pause, and every
    message is still acknowledged once."""
    ports, ip_b = pair_ports("rcpause")
    ports = [p.replace("100.0", "0.1") for p in ports]
    msgs = 3000
    f = flow("w", "a", MAC_B, ip_b, transport='"rc"', ops="{ write = 1; }", message_size=100, qpn=0x10,
             dest_qpn=0x20, dscp=26, rate_pps=5000, stop="{ messages = %d; }" % msgs,
             rc="{ retry_timeout_us = 2000000.0; }", latency='{ mode = "oneway"; }')
    gen = 'pfc_generators = ( { port = "a"; priorities = [3]; quanta = 65535; rate_pps = 10.0; count = 1; start_s = 0.1; } );'
    rc, rep, text = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f], run=gen))
    assert rc == 0, text
    a, b = rep["ports"]
    pause_ns = 65535 * 5120
    assert abs(b["paused_ns"][3] - pause_ns) < 20000 and b["pfc_rx"][3] == 1
    (fl,) = rep["flows"]
    assert fl["rc"]["completions"] == msgs and fl["responder"]["delivered_messages"] == msgs
    assert b["responses_dropped"] == 0
    assert 0.9 * pause_ns < fl["latency_ns"]["ack"]["max"] < 1.2 * pause_ns, fl["latency_ns"]["ack"]


def test_pause_generator_frames_dissected_by_tshark(engine, tmp_path):
    out = tmp_path / "pause.pcap"
    p = port("p", "net_pcap0", MAC_A, "192.168.1.1", 'vdev_args = "tx_pcap=%s";' % out)
    gen = 'pfc_generators = ( { port = "p"; pause = true; quanta = 4660; rate_pps = 500.0; count = 20; } );'
    rc, rep, text = engine.run(cfg([p], [role(1, "p", "tx")], [], run=gen), "-d", "5")
    assert rc == 0, text
    assert rep["ports"][0]["pause_tx"] == 20 and rep["ports"][0]["pfc_tx"] == [0] * 8
    cmd = ["tshark", "-r", str(out), "-T", "fields", "-E", "separator=,", "-e", "eth.dst", "-e", "macc.opcode",
           "-e", "macc.pause_time"]
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    assert len(lines) == 20
    for line in lines:
        dst, opcode, quanta = line.split(",")
        assert dst == "01:80:c2:00:00:01" and int(opcode, 0) == 0x0001 and int(quanta, 0) == 4660


PAUSED_LINK = """
eal = { lcores = "0-1"; memory_mb = 1024; };
ports = (
  { name = "a"; device = "ring:pz:a"; mac = "02:00:00:00:00:01"; ipv4 = "10.0.0.1"; link_speed_gbps = 4.0; mtu = 4200;
    rx_desc = 512; tx_desc = 512; qos = { egress = { shape_gbps = 4.0; }; }; },
  { name = "b"; device = "ring:pz:b"; mac = "02:00:00:00:00:02"; ipv4 = "10.0.0.2"; link_speed_gbps = 4.0; mtu = 4200;
    rx_desc = 512; tx_desc = 512; }
);
lcores = ( { lcore = 1; port = "a"; role = "txrx"; }, { lcore = 1; port = "b"; role = "txrx"; } );
pfc_generators = ( { port = "b"; priorities = [3]; quanta = 390; rate_pps = 5000.0; } );
flows = (
  { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; transport = "uc";
    ops = { write = 1; }; message_size = 65536; mtu = 4096; qpn = 0x101; dest_qpn = 0x201; count = 2; }
);
"""


def test_a_shaped_link_stops_between_frames_when_paused(engine):
    """Port a, shaped to its 4 Gb/s link, sends 4 KB frames; b pauses its priority 3 for 390
    quanta (50 us at 4 Gb/s) every 200 us: a quarter of the time. A NIC stops after the frame on
    the wire: a carries what the link can while not paused, and at most one frame more a pause.
    (The egress used to write 8 frames a visit, 66 us of the link, ahead of time: the pauses cost
    it nothing, 3.96 Gb/s against 3.0.)"""
    rc, rep, text = engine.run(PAUSED_LINK, "-d", "2")
    assert rc == 0, text
    a = next(p for p in rep["ports"] if p["name"] == "a")
    secs, e = rep["duration_s"], a["egress"]
    wire = sum(b + 24 * k for b, k in zip(e["tc_bytes"], e["tc_packets"])) * 8 / secs / 1e9
    paused = a["paused_ns"][3] / 1e9 / secs
    lost = e["cpu_lost_ms"] / 1e3 / secs
    frame_s = (4096 + 58 + 16 + 24) * 8 / 4e9      # UC WRITE: RETH 16, headers 58, wire 24
    pauses = a["pfc_rx"][3] / secs
    # 50 us a pause (their union: on a busy machine the generator's frames may come late, together)
    assert 0.1 < paused <= pauses * 390 * 512 / 4e9 + 0.005, (paused, pauses)
    assert wire <= 4 * (1 - paused) + 4 * pauses * frame_s + 0.02, (wire, paused)
    # and it does use the link while not paused, when the machine left the lcore alone (a moment
    # off the CPU after a pause, with the link idle, is not in cpu_lost)
    if on_cpu_share(rep) > 0.99:
        assert wire >= 4 * (1 - paused - lost) * 0.9, (wire, paused, lost)

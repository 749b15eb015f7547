"""roce-ccsim on a fabric (scenario = "fabric", docs/ccsim.md#fabric-scenarios): the shared switch
model (the lab switch's MMU, fabric/'s routes and load balancing, cc/'s RED, DCQCN and TIMELY) at
cluster scale.

    /usr/bin/python3 -m pytest -q tests/integration/test_ccsim_fabric.py

The oracles are not the simulator: a store-and-forward pipeline computed here, roce-fabric's
max-min rates and ECMP plan (itself checked against networkx and zlib in test_fabric.py),
Python's zlib.crc32 for polarisation, HPCC's percentile table recomputed from the listed flows,
the Poisson arrival count a load implies, and the bounds a bottleneck's rate sets. Every run is
well under a second of CPU but the 1,024-host ones (a few seconds each).
"""
import json
import math
import os
import subprocess
import zlib
from pathlib import Path

import pytest

# the release build only (CI's time): roce-ccsim's fabric runs are arithmetic; its loader runs under
# ASan in fuzz_ccsim
pytestmark = pytest.mark.release_only

ROOT = Path(__file__).resolve().parents[2]
CFG = ROOT / "configs" / "ccsim"

WEBSEARCH = """( [0, 0], [10000, 15], [20000, 20], [30000, 30], [50000, 40], [80000, 53], [200000, 60],
  [1000000, 70], [2000000, 80], [5000000, 90], [10000000, 97], [30000000, 100] )"""


def ccsim_path():
    return Path(os.environ.get("ROCE_CCSIM", ROOT / "build" / "apps" / "roce-ccsim"))


def fabric_path():
    return Path(os.environ.get("ROCE_FABRIC", ROOT / "build" / "apps" / "roce-fabric"))


class Sim:
    def __init__(self, tmp):
        self.tmp, self.n = tmp, 0

    def run(self, cfg=None, text=None, args=(), csv=False):
        """(returncode, stdout, stderr, summary or None, csv text)."""
        self.n += 1
        if text is not None:
            cfg = self.tmp / ("s%d.cfg" % self.n)
            cfg.write_text(text)
        out = self.tmp / ("s%d.json" % self.n)
        cmd = [str(ccsim_path()), "-s", str(out)] + list(args) + [str(cfg)]
        if csv:
            cmd[1:1] = ["-c", str(self.tmp / ("s%d.csv" % self.n))]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        summary = json.loads(out.read_text()) if r.returncode == 0 and out.exists() else None
        text_csv = (self.tmp / ("s%d.csv" % self.n)).read_text() if csv and r.returncode == 0 else ""
        return r.returncode, r.stdout, r.stderr, summary, text_csv


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    if not ccsim_path().exists():
        pytest.fail("roce-ccsim not found at %s (build it, or set $ROCE_CCSIM)" % ccsim_path())
    return Sim(tmp_path_factory.mktemp("ccsim-fabric"))


_cache = {}


def shipped(sim, name):
    if name not in _cache:
        rc, _, err, s, _ = sim.run(CFG / (name + ".cfg"))
        assert rc == 0, err
        _cache[name] = s
    return _cache[name]


def scenario(fabric, traffic, switch="", extra="", duration=200, sample=10):
    return """scenario = "fabric";
duration_us = %g;
sample_us = %g;
%s
fabric = { %s };
%s
traffic = ( %s );
""" % (duration, sample, extra, fabric, ("switch = { %s };" % switch) if switch else "", traffic)


LEAF_SPINE = ('kind = "leaf-spine"; leaves = %d; spines = %d; hosts_per_leaf = %d; host_gbps = 100; '
              'uplink_gbps = 100; host_delay_us = 1; uplink_delay_us = 1; %s')
PFC = 'buffer_bytes = 32000000; pfc = { priorities = [3]; xoff_bytes = 150000; xon_bytes = 135000; };'
ECN = 'ecn = { classes = [3]; kmin_bytes = 100000; kmax_bytes = 400000; pmax = 0.2; };'


def link(s, name):
    return next(l for l in s["fabric"]["links"] if l["name"] == name)


def by_dir(s, frm, to):
    """The direction of the link between frm and to that leaves frm."""
    for l in s["fabric"]["links"]:
        if (l["a"], l["b"]) == (frm, to):
            return l["a_to_b"]
        if (l["b"], l["a"]) == (frm, to):
            return l["b_to_a"]
    raise KeyError((frm, to))


# ---- one flow: the pipeline computed by hand ----------------------------------------------------------


def pipeline_us(size, mtu, hops_gbps, delays_us):
    """When the last byte of a flow sent back to back reaches its receiver: every packet is
    stored and forwarded, each link serialises one packet at a time."""
    n = -(-size // mtu)
    sizes = [mtu] * (n - 1) + [size - mtu * (n - 1)]
    t = [0.0] * n  # when each packet is ready at the current hop's transmitter, µs
    for gbps, d in zip(hops_gbps, delays_us):
        free = 0.0
        for i, b in enumerate(sizes):
            start = max(t[i], free)
            free = start + b * 8 / (gbps * 1e3)
            t[i] = free + d
    return t[-1]


def test_one_flow_completes_when_the_pipeline_says(sim):
    text = scenario(LEAF_SPINE % (2, 1, 1, ""),
                    '{ pattern = "pairs"; pairs = ( ["h0", "h1"] ); cc = "none"; size_bytes = 1000000; }')
    rc, out, err, s, _ = sim.run(text=text)
    assert rc == 0, err
    f = s["flows"][0]
    want = pipeline_us(1000000, 1024, [100] * 4, [1] * 4)
    assert f["completion_us"] == pytest.approx(want, abs=0.002)
    # the ideal (alone in the fabric): first packet stored and forwarded, the rest at line rate
    assert f["ideal_us"] == pytest.approx(4 + 4 * 1024 * 8 / 1e5 + (1000000 - 1024) * 8 / 1e5, abs=0.002)
    assert f["slowdown"] == pytest.approx(max(1.0, f["completion_us"] / f["ideal_us"]), rel=1e-6)
    assert f["counters"]["sent"] == 977 and f["rx_bytes"] == 1000000
    assert s["totals"]["completed"] == 1 and "completed 1 of 1 sized flows" in out
    # every link of the path carried the flow's bytes once, the others nothing
    for name in ("h0-leaf0", "leaf0-spine0", "leaf1-spine0", "h1-leaf1"):
        l = link(s, name)
        assert l["a_to_b"]["bytes"] + l["b_to_a"]["bytes"] == 1000000


def test_qps_starting_together_take_turns_from_the_first(sim):
    """Three QPs of one NIC start at 0, two packets each to three hosts of the same leaf: the NIC
    sends them round-robin, h1 h2 h3 h1 h2 h3, so flow k's second packet is the NIC's (4 + k)th
    and it completes 2 + k packet times after the first second packet. (Picking at once when the
    first QP starts sent it twice in a row, h1 h1 h2 h3 h2 h3: htsim's all-to-all found it as a
    first destination getting two packets from every sender.)"""
    text = scenario(LEAF_SPINE % (2, 1, 4, ""), '{ pattern = "pairs"; pairs = ( ["h0", "h1"], ["h0", "h2"], '
                    '["h0", "h3"] ); cc = "none"; size_bytes = 2048; }')
    rc, _, err, s, _ = sim.run(text=text)
    assert rc == 0, err
    t = 1024 * 8 / 100e3  # a packet's time on a 100 Gb/s link, µs
    for k, f in enumerate(s["flows"]):
        # its second packet leaves the NIC (3 + k) packets after the first one, then one packet
        # time and 1 µs to the leaf and again to the host (store and forward)
        assert f["completion_us"] == pytest.approx((3 + k + 2) * t + 2, abs=0.002), (k, f)


# ---- ECMP at 128 hosts: against roce-fabric's plan and max-min rates ----------------------------------


def test_permutation_agrees_with_roce_fabric(sim, tmp_path):
    s = shipped(sim, "fabric-128-permutation")
    plan = tmp_path / "plan.json"
    r = subprocess.run([str(fabric_path()), "-q", "-r", str(plan), str(CFG / "fabric-128-permutation.cfg")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    p = json.loads(plan.read_text())
    # the same hash and routes: every ECMP group's flows per member exactly as planned
    planned = {(g["switch"], tuple(g["members"])): g["flows"] for g in p["ecmp_groups"]}
    got = {(g["switch"], tuple(g["members"])): g["flows"] for g in s["fabric"]["ecmp_groups"]}
    assert got == {k: [int(x) for x in v] for k, v in planned.items()}
    # a member no flow hashes to carries nothing; each member's bytes follow its flows
    for g in s["fabric"]["ecmp_groups"]:
        for flows, b in zip(g["flows"], g["bytes"]):
            assert (flows == 0) == (b == 0), g
    # rates: a flow alone on its path runs at line rate (9,000-byte payloads in 9,064-byte
    # frames are not counted apart: goodput is the frames' bytes); one that max-min gives a
    # share of a link gets at most what that link gives all of them, PFC's blocking taking some
    fluid = {(f["src"], f["dst"]): f["gbps"] for f in p["flows"]}
    for f in s["flows"]:
        want = fluid[(f["src"], f["dst"])]
        if want == 100:
            assert f["goodput_gbps"] > 99, f
        else:
            assert 0.3 * want < f["goodput_gbps"] < 1.6 * want, (f, want)
    total = sum(f["goodput_gbps"] for f in s["flows"])
    assert 0.9 * p["summary"]["aggregate_gbps"] < total < 1.02 * p["summary"]["aggregate_gbps"]
    assert s["totals"]["dropped"] == 0 and s["totals"]["pauses"] > 0
    assert s["fabric"]["jfi"] == pytest.approx(
        total ** 2 / (len(s["flows"]) * sum(f["goodput_gbps"] ** 2 for f in s["flows"])), rel=1e-6)


def test_udp_sports_put_each_flow_on_the_spine_its_port_hashes_to(sim, tmp_path):
    """udp_sports gives each flow its UDP source port (pairs in order, each pair's QPs in turn):
    with the hash on the port alone, a port zlib.crc32 sends to spine j puts the flow on
    leaf0-spine j (bench/run-ccsim-htsim.sh pins htsim's ECMP paths so). Four flows pinned to one
    spine share its uplink; pinned to four, each has its own."""
    member = lambda port: (zlib.crc32(port.to_bytes(2, "big")) * 4) >> 32
    to = {j: [p for p in range(1024, 65536) if member(p) == j][:8] for j in range(4)}
    fab = LEAF_SPINE % (2, 4, 4, 'hash = { function = "crc32"; seed = 0; fields = ["udp_sport"]; };')
    pairs = ", ".join('["h%d", "h%d"]' % (i, 4 + i) for i in range(4))
    for spines in ([2, 2, 2, 2, 2, 2, 2, 2], [0, 0, 1, 1, 2, 2, 3, 3]):
        ports = [to[j][i] for i, j in enumerate(spines)]
        traffic = '{ pattern = "pairs"; pairs = ( %s ); qps_per_pair = 2; udp_sports = [%s]; cc = "none"; }' % (
            pairs, ", ".join(map(str, ports)))
        rc, _, err, s, _ = sim.run(text=scenario(fab, traffic, switch=PFC))
        assert rc == 0, err
        assert [f["udp_sport"] for f in s["flows"]] == ports
        assert [(f["src"], f["dst"]) for f in s["flows"]] == [("h%d" % (i // 2), "h%d" % (4 + i // 2)) for i in range(8)]
        up = [by_dir(s, "leaf0", "spine%d" % j)["bytes"] for j in range(4)]
        assert [b > 0 for b in up] == [j in spines for j in range(4)], up
        rates = [f["goodput_gbps"] for f in s["flows"]]
        if len(set(spines)) == 1:  # eight QPs through one 100 Gb/s uplink
            assert sum(rates) < 101 and min(rates) > 0.9 * sum(rates) / 8
        else:  # each pair's two QPs alone on their spine: the sender's link is the limit
            assert sum(rates) > 0.97 * 400
    # roce-fabric plans from the entry's port rule: it refuses the list rather than ignore it
    cfg = tmp_path / "sports.cfg"
    cfg.write_text(scenario(fab, '{ pattern = "ring"; udp_sports = [%s]; }' % ", ".join(["49152"] * 8)))
    r = subprocess.run([str(fabric_path()), "-q", str(cfg)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "traffic.[0].udp_sports: unknown setting" in r.stderr, r.stderr


def test_spraying_balances_and_go_back_n_pays_for_reordering(sim):
    text = (CFG / "fabric-128-permutation.cfg").read_text().replace('load_balance = "ecmp"', 'load_balance = "spray"')
    rc, _, err, s, _ = sim.run(text=text)
    assert rc == 0, err
    ecmp = shipped(sim, "fabric-128-permutation")
    for g in s["fabric"]["ecmp_groups"]:
        assert g["mmr"] < 1.05, g  # every frame drawn at random: the uplinks carry alike
    t = s["totals"]
    assert t["out_of_order"] > 0 and t["naks"] > 0 and t["retransmitted"] > 0
    assert t["dropped"] == 0 and t["timeouts"] == 0  # lossless: only reordering costs
    for f in s["flows"]:
        c = f["counters"]
        assert c["naks"] <= c["out_of_order"]  # one NAK per gap, however many frames it drops
    # RC answers reordering with go-back-N: the balanced fabric carries less than ECMP's
    assert s["fabric"]["goodput_gbps"] < ecmp["fabric"]["goodput_gbps"]
    # a receiver that places frames up to 256 ahead (out-of-order placement) takes what spraying
    # carries: nearly every flow at line rate, nothing resent; with 4 ahead, gaps still NAK
    for window in (256, 4):
        rc, _, err, p, _ = sim.run(text=text.replace("switch = {", "transport = { reorder_window = %d; };\nswitch = {" % window, 1))
        assert rc == 0, err
        t = p["totals"]
        assert t["out_of_order"] > 0 and t["dropped"] == 0
        if window == 256:
            assert t["retransmitted"] == 0 and t["naks"] == 0
            assert p["fabric"]["goodput_gbps"] > 0.9 * 12800 and p["fabric"]["jfi"] > 0.99
            assert all(f["rx_bytes"] * 8 / 2000e3 == pytest.approx(f["goodput_gbps"], rel=1e-6) for f in p["flows"])
        else:
            assert 0 < t["naks"] < s["totals"]["naks"]
            assert s["fabric"]["goodput_gbps"] < p["fabric"]["goodput_gbps"]


def test_same_hash_on_every_tier_polarises(sim):
    """k = 4 fat-tree, all-to-all: with one seed an aggregation switch's uplinks are chosen by
    the hash bits its edge switch already used, so aggregation switch j of a pod (reached by
    the flows whose hash picked member j) sends them all by its uplink j. A seed per switch
    only XORs a constant into a CRC (the CRC is affine in its initial value): it permutes the
    members per switch, which spreads the flows of different edge switches, not of one."""
    fab = ('kind = "fat-tree"; k = 4; host_gbps = 100; uplink_gbps = 100; core_gbps = 100; '
           'load_balance = "ecmp"; hash = { seed_per_switch = %s; };')
    runs = {}
    for per in ("false", "true"):
        rc, _, err, s, _ = sim.run(text=scenario(fab % per, '{ pattern = "all_to_all"; cc = "none"; }',
                                                 switch=PFC, duration=100))
        assert rc == 0, err
        runs[per] = s
    aggs = lambda s: [g for g in s["fabric"]["ecmp_groups"] if g["switch"].startswith("agg")]
    assert len(aggs(runs["false"])) == 8
    for g in aggs(runs["false"]):
        j = int(g["switch"][3:]) % 2  # its place in its pod
        assert [b > 0 for b in g["bytes"]] == [m == j for m in range(2)], g
        assert g["mmr"] == pytest.approx(2.0) and g["flows"][1 - j] == 0
    used = lambda s: sum(b > 0 for g in aggs(s) for b in g["bytes"])
    assert used(runs["false"]) == 8 and used(runs["true"]) > 8
    assert runs["true"]["fabric"]["goodput_gbps"] > 1.2 * runs["false"]["fabric"]["goodput_gbps"]


# ---- incast: PFC hop by hop, DCQCN ------------------------------------------------------------------


def test_incast_64_to_1_on_1024_hosts(sim):
    s = shipped(sim, "fabric-1024-incast-64to1")
    t = s["totals"]
    assert s["fabric"]["nics"] == 1024 and t["flows"] == 64
    assert t["completed"] == 64 and t["dropped"] == 0
    last = max(f["completion_us"] for f in s["flows"])
    assert 5120 < last < 5120 * 1.1  # 64 MB through h0's 100 Gb/s: 5.12 ms at best
    down = by_dir(s, "leaf0", "h0")
    assert down["utilization"]["p95"] > 0.99
    assert sum(f["goodput_gbps"] for f in s["flows"]) == pytest.approx(100, rel=0.01)
    # DCQCN shares the bottleneck: 64 flows near 100/64 Gb/s each in the window
    tr = s["traffic"][0]
    assert tr["jfi"] > 0.8 and t["ce_marked"] > 0 and sum(f["counters"]["cnps"] for f in s["flows"]) > 0
    # PFC spreads: leaf0 pauses the spines (hop 1), the spines pause the senders' leaves (hop 2)
    spine_paused = sum(sum(by_dir(s, "spine%d" % k, "leaf0")["pauses_received"]) for k in range(16))
    leaf_paused = sum(sum(by_dir(s, "leaf%d" % l, "spine%d" % k)["pauses_received"])
                      for l in range(1, 32) for k in range(16))
    assert spine_paused > 0 and leaf_paused > 0
    sw = {w["name"]: w for w in s["fabric"]["switches"]}
    assert sw["leaf0"]["xoff_sent"] > 0 and sw["leaf0"]["buffer_peak_bytes"] <= 32000000


def test_dcqcn_and_timely_pause_less_than_line_rate_senders(sim):
    """15:1 incast across 4 leaves: the senders slowed by DCQCN's CNPs or TIMELY's RTT gradient
    hold the fabric paused for less time than senders at line rate held back by PFC alone."""
    hosts = ", ".join('"h%d"' % i for i in range(0, 32, 2))
    peaks = {}
    for cc in ("none", "dcqcn", "timely"):
        # TIMELY samples the RTT once a segment: at its 10 Mb/s floor a 16 KB segment takes 13 ms
        more = 'timely = { segment_bytes = 4096; min_rate_mbps = 500; };' if cc == "timely" else ""
        tr = '{ pattern = "incast"; dst = "h0"; hosts = [%s]; cc = "%s"; size_bytes = 500000; %s }' % (hosts, cc, more)
        rc, _, err, s, _ = sim.run(text=scenario(LEAF_SPINE % (4, 2, 8, ""), tr, switch=PFC + ECN, duration=6000,
                                                 sample=50))
        assert rc == 0, err
        peaks[cc] = sum(sum(l[d]["paused_us"]) for l in s["fabric"]["links"] for d in ("a_to_b", "b_to_a"))
        assert s["totals"]["completed"] == 15 and s["totals"]["dropped"] == 0, cc
        last = max(f["completion_us"] for f in s["flows"])
        assert last > 15 * 500000 * 8 / 1e5, cc  # 7.5 MB through one 100 Gb/s link: 0.6 ms at best
    assert peaks["dcqcn"] < 0.8 * peaks["none"] and peaks["timely"] < 0.8 * peaks["none"], peaks


def test_lossy_fabric_recovers_by_go_back_n(sim):
    hosts = ", ".join('"h%d"' % i for i in range(0, 9))
    tr = '{ pattern = "incast"; dst = "h0"; hosts = [%s]; cc = "none"; size_bytes = 300000; }' % hosts
    rc, _, err, s, _ = sim.run(text=scenario(LEAF_SPINE % (2, 1, 8, ""), tr, switch="buffer_bytes = 200000;",
                                             extra="transport = { rto_us = 200; };", duration=20000, sample=100))
    assert rc == 0, err
    t = s["totals"]
    assert t["dropped"] > 0 and t["retransmitted"] > 0
    assert t["completed"] == 8  # go-back-N and the timeout bring every byte through
    assert all(f["rx_bytes"] == 300000 for f in s["flows"])
    link_drops = sum(sum(l[d]["dropped"].values()) for l in s["fabric"]["links"] for d in ("a_to_b", "b_to_a"))
    assert link_drops == t["dropped"] == sum(f["counters"]["dropped"] for f in s["flows"])
    assert sum(w["dropped"]["buffer"] + w["dropped"]["queue"] for w in s["fabric"]["switches"]) == t["dropped"]
    assert t["pauses"] == 0


def test_one_switch_fabric_agrees_with_the_single_switch_model(sim):
    """configs/ccsim/incast-8to1-100g.cfg (the network scenario: roce-ccsim's own single switch)
    and the same incast as a fabric of one switch (the shared model: the lab switch's MMU,
    fabric/'s routes, NICs with their QPs): the two switch models agree on what DCQCN does."""
    hosts = ", ".join('"s%d"' % i for i in range(8))
    links = ", ".join('{ a = "sw"; b = "%s"; gbps = 100; delay_us = 1; }' % h for h in ["s%d" % i for i in range(8)] + ["r0"])
    fab = 'kind = "custom"; switches = ( { name = "sw"; } ); hosts = [%s, "r0"]; links = ( %s );' % (hosts, links)
    sw = ('buffer_bytes = 12000000; ecn = { classes = [3]; kmin_bytes = 100000; kmax_bytes = 200000; pmax = 1.0; }; '
          'pfc = { priorities = [3]; xoff_bytes = 150000; xon_bytes = 135000; };')
    tr = ('{ pattern = "incast"; dst = "r0"; cc = "dcqcn"; mtu_bytes = 1024; priority = 3; '
          'dcqcn = { profile = "nvidia"; rpg_time_reset = 150; }; }')
    rc, _, err, f, _ = sim.run(text=scenario(fab, tr, switch=sw, extra="seed = 1;", duration=20000, sample=10))
    assert rc == 0, err
    rc, _, err, n, _ = sim.run(CFG / "incast-8to1-100g.cfg")
    assert rc == 0, err
    assert f["window_us"] == n["window_us"]
    assert f["fabric"]["switches"][0]["buffer_peak_bytes"] == pytest.approx(n["max_buffer_bytes"], rel=0.05)
    assert abs(f["totals"]["pauses"] - n["pauses"]) <= 2
    net = sorted(x["throughput_gbps"] for x in n["flows"])
    fab_ = sorted(x["goodput_gbps"] for x in f["flows"])
    assert sum(fab_) == pytest.approx(sum(net), rel=0.01)
    for a, b in zip(fab_, net):
        assert a == pytest.approx(b, rel=0.06)
    assert f["fabric"]["jfi"] == pytest.approx(n["jain"], abs=0.005)
    cnps = sum(x["counters"]["cnps"] for x in f["flows"])
    assert cnps == pytest.approx(n["cnps"], rel=0.1)


def test_a_tiers_settings_apply_to_its_switches_only(sim):
    """ECN on the spines alone (switch.spine.ecn): the four senders of leaf1 into h0 overload
    the spines' ports toward leaf0 (up to 400 Gb/s onto 2 x 100) and only those mark."""
    tr = '{ pattern = "incast"; dst = "h0"; hosts = ["h0", "h4", "h5", "h6", "h7"]; cc = "dcqcn"; }'
    sw = PFC + ' spine = { buffer_bytes = 2000000; %s };' % ECN
    rc, _, err, s, _ = sim.run(text=scenario(LEAF_SPINE % (2, 2, 4, ""), tr, switch=sw, duration=1000, sample=50))
    assert rc == 0, err
    marked = {}
    for l in s["fabric"]["links"]:
        for d, frm in (("a_to_b", l["a"]), ("b_to_a", l["b"])):
            if l[d]["ecn_marked"]:
                marked[frm] = marked.get(frm, 0) + l[d]["ecn_marked"]
    assert marked and all(k.startswith("spine") for k in marked), marked
    sw = {w["name"]: w for w in s["fabric"]["switches"]}
    assert sw["spine0"]["buffer_bytes"] == 2000000 and sw["leaf0"]["buffer_bytes"] == 32000000


def test_a_link_failure_loses_frames_until_the_routes_converge(sim):
    """leaf0's four hosts send 4 MB each to leaf1's over 2 spines; leaf0-spine0 dies at 200 µs
    and comes back at 600, the routes converging 100 µs after each. Frames sent into the dead
    link are lost until the routes leave it, the flows hashed to it go back N and complete."""
    ev = ('events = ( { at_s = 0.0002; link = "leaf0-spine0"; state = "down"; }, '
          '{ at_s = 0.0006; link = "leaf0-spine0"; state = "up"; } ); convergence_ms = 0.1;')
    tr = ('{ pattern = "pairs"; pairs = ( ["h0", "h4"], ["h1", "h5"], ["h2", "h6"], ["h3", "h7"] ); cc = "dcqcn"; '
          'size_bytes = 4000000; }')
    rc, _, err, s, text = sim.run(text=scenario(LEAF_SPINE % (2, 2, 4, ev), tr, switch=PFC + ECN, duration=2000,
                                                sample=50), csv=True)
    assert rc == 0, err
    down, up = s["fabric"]["events"]
    assert (down["state"], down["at_us"], down["converged_us"]) == ("down", 200, 300)
    assert (up["state"], up["at_us"], up["converged_us"], up["frames_lost"]) == ("up", 600, 700, 0)
    l = link(s, "leaf0-spine0")
    lost = l["a_to_b"]["dropped"]["link_down"] + l["b_to_a"]["dropped"]["link_down"]
    hit = [f for f in s["flows"] if f["counters"]["dropped"]]
    assert down["frames_lost"] == lost == sum(f["counters"]["dropped"] for f in s["flows"]) > 0
    group = next(g for g in s["fabric"]["ecmp_groups"] if g["switch"] == "leaf0")
    assert down["flows_hit"] == len(hit) == group["flows"][group["members"].index("spine0")] > 0
    assert 90 < down["loss_duration_us"] <= 101  # until the routes leave it (+ the frames on the wire)
    rows = [r for r in csv_rows(text) if r["link"] == "leaf0-spine0" and r["direction"] == "a_to_b"]
    rate = {float(r["time_us"]): float(r["gbps"]) for r in rows}
    # what the link carried just before it died, for the 100 µs until the routes left it
    assert lost == pytest.approx(rate[200] * 1e3 * 100 / (1024 * 8), rel=0.25)
    assert all(rate[t] == 0 for t in rate if 350 <= t <= 700)  # converged away; back after 700
    assert any(rate[t] > 0 for t in rate if t >= 750)
    for f in s["flows"]:
        assert f["rx_bytes"] == 4000000 and f["completion_us"] is not None
    for f in hit:
        assert f["counters"]["retransmitted"] >= f["counters"]["dropped"] and f["counters"]["naks"] >= 1


def test_plot_script_draws_a_fabric_run(sim, tmp_path):
    """scripts/plot-ccsim-fabric.py on a run with sized flows and a link event: its three PNGs
    and a summary that repeats the run's own figures."""
    ev = 'events = ( { at_s = 0.0002; link = "leaf0-spine0"; state = "down"; } ); convergence_ms = 0.05;'
    tr = '{ pattern = "all_to_all"; cc = "dcqcn"; size_bytes = 200000; }'
    text = scenario(LEAF_SPINE % (2, 2, 4, ev), tr, switch=PFC + ECN, duration=1000, sample=50)
    (tmp_path / "s.cfg").write_text(text)
    r = subprocess.run([str(ccsim_path()), "-q", "-s", str(tmp_path / "summary.json"), "-c", str(tmp_path / "links.csv"),
                        str(tmp_path / "s.cfg")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    p = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "plot-ccsim-fabric.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    for png in ("links.png", "ecmp.png", "flows.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    s = json.loads((tmp_path / "summary.json").read_text())
    e = s["fabric"]["events"][0]
    assert "link leaf0-spine0 down at 200.0 us: %d frames lost" % e["frames_lost"] in p.stdout
    assert "%d of %d sized flows completed" % (s["traffic"][0]["completed"], 56) in p.stdout
    assert (tmp_path / "summary.txt").read_text() == p.stdout
    (tmp_path / "links.csv").unlink()
    assert subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "plot-ccsim-fabric.py"), str(tmp_path), "--quiet"],
                          capture_output=True, text=True, timeout=120).returncode == 1


def csv_rows(text):
    import csv as _csv
    return list(_csv.DictReader(text.splitlines()))


# ---- flow completion times ---------------------------------------------------------------------------


def hpcc_table(flows, step=5):
    """HPCC's analysis/fct_analysis.py, with nearest-rank percentiles: the completed flows by
    size (then slowdown), in steps of `step` % of their count; deciles of one size merge."""
    z = sorted((f["size_bytes"], f["slowdown"]) for f in flows if f["completion_us"] is not None)
    n, out, frm = len(z), [], 0
    for b in range(1, 100 // step + 1):
        to = n * b * step // 100
        while 0 < to < n and z[to][0] == z[to - 1][0]:
            to += 1
        if to <= frm:
            continue
        sd = sorted(x for _, x in z[frm:to])
        pick = lambda p: sd[max(0, math.ceil(p / 100 * len(sd)) - 1)]
        out.append((z[frm][0], z[to - 1][0], to - frm, pick(50), pick(95), pick(99)))
        frm = to
    return out


def test_fct_buckets_as_hpcc_prints_them(sim):
    tr = '{ pattern = "all_to_all"; cc = "dcqcn"; load = 0.3; stop_us = 2000; size_cdf = %s; }' % WEBSEARCH
    rc, out, err, s, _ = sim.run(text=scenario(LEAF_SPINE % (4, 2, 4, ""), tr, switch=PFC + ECN, duration=6000,
                                               sample=100))
    assert rc == 0, err
    got = [(b["min_bytes"], b["max_bytes"], b["flows"], b["slowdown"]["p50"], b["slowdown"]["p95"],
            b["slowdown"]["p99"]) for b in s["traffic"][0]["fct"]["buckets"]]
    want = hpcc_table(s["flows"])
    assert len(got) == len(want) >= 10
    for g, w in zip(got, want):
        assert g[:3] == w[:3] and g[3:] == pytest.approx(w[3:], rel=1e-6)
    assert all(f["slowdown"] >= 1 for f in s["flows"] if f["slowdown"] is not None)
    assert "slowdown by size" in out


def test_poisson_arrivals_follow_the_load(sim):
    """16 senders at 30 % of 100 Gb/s for 2 ms with sizes uniform in 1..10 KB (mean 5.5 KB):
    0.3 x 1e11 / (5500 x 8) = 681,818 flows/s each, 21,818 in all (a Poisson count: sd 148)."""
    tr = '{ pattern = "all_to_all"; cc = "none"; load = 0.3; stop_us = 2000; size_cdf = ( [1000, 0], [10000, 100] ); }'
    rc, _, err, s, _ = sim.run(text=scenario(LEAF_SPINE % (4, 2, 4, ""), tr, switch=PFC, duration=2100, sample=100))
    assert rc == 0, err
    n = s["totals"]["flows"]
    assert abs(n - 21818) < 5 * 148
    sizes = [f["size_bytes"] for f in s["flows"]]
    assert min(sizes) >= 1000 and max(sizes) <= 10000
    assert sum(sizes) / n == pytest.approx(5500, rel=0.02)
    starts = [f["start_us"] for f in s["flows"]]
    assert min(starts) >= 0 and max(starts) < 2000
    # another seed, another draw of the same scenario; the same seed, the same one
    rc2, _, _, s2, _ = sim.run(text=scenario(LEAF_SPINE % (4, 2, 4, ""), tr, switch=PFC, duration=2100, sample=100),
                               args=("--seed", "7"))
    assert rc2 == 0 and s2["flows_seed"] == 7 and [f["size_bytes"] for f in s2["flows"]] != sizes


def test_same_scenario_same_bytes(sim):
    text = (CFG / "fabric-128-permutation.cfg").read_text().replace("duration_us = 2000", "duration_us = 300") \
        .replace("window_us = [0, 2000]", "window_us = [0, 300]").replace('load_balance = "ecmp"', 'load_balance = "flowlet"')
    a, b = sim.run(text=text, csv=True), sim.run(text=text, csv=True)
    assert a[0] == b[0] == 0, a[2]
    for r in (a, b):
        del r[3]["run_info"], r[3]["scenario"]
    assert a[3] == b[3] and a[4] == b[4] and a[1] == b[1]
    rows = a[4].splitlines()
    assert rows[0] == "time_us,link,direction,gbps,queue_bytes,paused_classes"
    assert len(rows) == 1 + 3 * 256 * 2  # every link direction at 100, 200 and 300 µs
    assert sum(w["flowlets"] for w in a[3]["fabric"]["switches"]) > 0


def test_the_1024_host_fat_tree_polarises_without_per_switch_seeds(sim):
    s = shipped(sim, "fabric-fat-tree-1024")
    assert s["fabric"]["nics"] == 1024 and s["fabric"]["switches"] == 320 or len(s["fabric"]["switches"]) == 320
    share = s["fabric"]["goodput_gbps"] / 102400
    assert 0.25 < share < 0.5, share  # three tiers of hashing: about 35 % (htsim: 35.6 %)
    # utilisation: what each direction carried over the run, per sample and on the whole
    for l in s["fabric"]["links"][:50]:
        for d in ("a_to_b", "b_to_a"):
            u = l[d]["utilization"]
            # bytes count when a frame starts: an interval may hold one frame more than its rate
            assert 0 <= u["mean"] <= u["max"] <= 1 + 4096 * 8 / (100e3 * 50) and u["p95"] <= u["max"]
            assert u["mean"] == pytest.approx(l[d]["bytes"] * 8 / (l["gbps"] * 1e3 * 1000), abs=0.02)


# ---- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fabric,switch,traffic,want", [
    (LEAF_SPINE % (2, 1, 2, ""), "spine = { buffer_bytes = 1000; }; core = { buffer_bytes = 1; };",
     '{ pattern = "all_to_all"; }', "switch.core: this fabric has no core switches"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; load = 0.5; }',
     "traffic.[0].load: needs the flows' size (size_bytes or size_cdf)"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; size_cdf = ( [0, 0], [100, 90] ); }',
     "traffic.[0].size_cdf: ends at 90 % (allowed: the last point at 100)"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; size_cdf = ( [0, 0], [100, 100] ); size_bytes = 5; }',
     "traffic.[0].size_cdf: and size_bytes both give the flows' size"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; start_us = 500; }',
     "traffic.[0].start_us: is not before duration_us"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; colour = 1; }', "traffic.[0].colour: unknown setting"),
    (LEAF_SPINE % (2, 33, 40, ""), "", '{ pattern = "all_to_all"; }', "switch leaf0 has 73 ports; roce-ccsim's switches have at most 64"),
    (LEAF_SPINE % (2, 1, 2, ""), "alpha = 100;", '{ pattern = "all_to_all"; }', "switch.alpha"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; size_bytes = 100000000000000L; }',
     "traffic.[0].size_bytes: is 97656250000 packets of mtu_bytes 1024"),
    (LEAF_SPINE % (2, 1, 2, 'lcore = 2;'), "", '{ pattern = "all_to_all"; }',
     "fabric.lcore: is the engine's lab setting; roce-ccsim does not simulate it"),
    (LEAF_SPINE % (2, 1, 2, 'events = ( { at_s = 0.001; link = "leaf0-spine0"; state = "down"; } );'), "",
     '{ pattern = "all_to_all"; }', "fabric.events.[0]: at_s = 0.001 is not before duration_us (200)"),
    (LEAF_SPINE % (2, 1, 2, 'events = ( { at_s = 0.0001; link = "leaf9-spine0"; state = "down"; } );'), "",
     '{ pattern = "all_to_all"; }', "fabric.events.[0].link: no link 'leaf9-spine0' in the fabric"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "all_to_all"; udp_sports = [1, 2, 3]; }',
     "traffic.[0].udp_sports: 3 ports for 12 flows (12 pairs x qps_per_pair 1)"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "ring"; udp_sports = [1, 70000, 3, 4]; }',
     "traffic.[0].udp_sports.[1]: 70000 is out of range (1..65535)"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "ring"; udp_sport = 5; udp_sports = [1, 2, 3, 4]; }',
     "traffic.[0].udp_sports: and udp_sport both give the ports"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "ring"; size_bytes = 1000; load = 0.5; udp_sports = [1, 2, 3, 4]; }',
     "traffic.[0].udp_sports: lists the flows' ports, but with a load the flows arrive at random"),
    (LEAF_SPINE % (2, 1, 2, ""), "", '{ pattern = "ring"; udp_sports = 5; }',
     "traffic.[0].udp_sports: must be an array of 1..1048576 UDP source ports"),
])
def test_bad_scenarios_name_the_line_and_setting(sim, fabric, switch, traffic, want):
    rc, out, err, _, _ = sim.run(text=scenario(fabric, traffic, switch=switch))
    assert rc == 1 and want in err, err
    assert err.count("\n") == 1 and ".cfg:" in err


def test_a_reorder_window_beyond_the_receivers_bitmap_is_refused(sim):
    text = scenario(LEAF_SPINE % (2, 1, 2, ""), '{ pattern = "all_to_all"; }', extra="transport = { reorder_window = 257; };")
    rc, _, err, _, _ = sim.run(text=text)
    assert rc == 1 and "transport.reorder_window" in err and "257" in err, err


def test_lab_sh_runs_a_fabric_scenario_in_roce_ccsim(tmp_path):
    """scripts/lab.sh on a roce-ccsim fabric scenario: roce-ccsim instead of the engine, its
    summary, CSV and plots in a new results folder."""
    import re
    import shutil
    cfg = tmp_path / "small.cfg"
    cfg.write_text(scenario(LEAF_SPINE % (2, 2, 2, ""), '{ pattern = "all_to_all"; cc = "dcqcn"; size_bytes = 100000; }',
                            switch=PFC + ECN, duration=500, sample=50))
    r = subprocess.run(["bash", str(ROOT / "scripts" / "lab.sh"), str(cfg), "--", "--seed", "3"],
                       capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                       env=dict(os.environ, PATH="/usr/bin:/bin"))
    m = re.search(r"lab: results in (\S+) ", r.stdout)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        assert m, r.stdout
        out = Path(m.group(1))
        for f in ("summary.json", "links.csv", "summary.txt", "links.png", "ecmp.png", "flows.png", "small.cfg"):
            assert (out / f).exists(), f
        s = json.loads((out / "summary.json").read_text())
        assert s["seed"] == 3 and s["type"] == "fabric" and s["totals"]["completed"] == 12
    finally:
        if m and m.group(1).startswith(str(ROOT / "results")):
            shutil.rmtree(m.group(1), ignore_errors=True)

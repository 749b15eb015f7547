"""roce-ccsim against the engine's own lab on fabrics both can run (docs/ccsim.md#what-it-agrees-with):
DCQCN at fabric scale, the same switch MMU, RED and DCQCN code driven two ways, frame by frame on an
lcore with real frames, and as deterministic events.

    /usr/bin/python3 -m pytest -q tests/integration/test_ccsim_vs_engine.py

Two fabrics, each an engine example and a roce-ccsim scenario of it (their headers say how the
units map: the engine's 1,082-byte frames as packets, links at rate x 1082 / 1106 for the
preamble, FCS and gap):

* ecmp: configs/fabric-leaf-spine-ecmp.cfg with its links at 0.5 Gb/s (4 leaves x 4 hosts, 2
  spines, an all-to-all of 240 UC WRITE QPs with DCQCN, ECN and PFC) against
  configs/ccsim/fabric-vs-engine-ecmp.cfg: ECMP collisions, and PFC's head-of-line blocking;
* incast: configs/fabric-pfc-spread.cfg with DCQCN on its flows and ECN at its switches against
  configs/ccsim/fabric-vs-engine-incast.cfg: a 2.7:1 incast where DCQCN sets the rates and frees
  the flow PFC would block.

What must hold on any machine: roce-fabric plans the same paths from both files, both runs put the
same flows on every ECMP member, lose nothing, mark, send CNPs, cut rates, and (ecmp) pause, with
the marks on the same uplinks. Rates are judged when the machine carried the engine's run
(fabric.machine, the lcores' held-up time: a poll-mode lcore that does not get its CPU slows the
emulated links, not the network; the engine runs a second time when the first was the machine's):
totals, links, NICs, flows, marks, CNPs, pauses and queues within the bounds measured and
explained in docs/ccsim.md. About 10 s (25 s when the machine limits the engine's runs).
"""
import json
import math
import os
import statistics
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, Engine, engine_path, held_up_s

# the release build only (CI's time): both runs are rate comparisons
pytestmark = pytest.mark.release_only


def ccsim_path():
    return Path(os.environ.get("ROCE_CCSIM", ROOT / "build" / "apps" / "roce-ccsim"))


def fabric_path():
    return Path(os.environ.get("ROCE_FABRIC", ROOT / "build" / "apps" / "roce-fabric"))


DURATION_S = 3
# a simulated packet is the engine's frame in a buffer (1,082 bytes); the engine's goodput is message
# payload: 1,024 bytes a frame, and a 16-byte RETH on one frame in 64
PAYLOAD = 1024 / (1082 + 16 / 64)


def replaced(text, *changes):
    for old, new, count in changes:
        assert text.count(old) == count, "the engine's example changed (%r): update the scenario too" % old
        text = text.replace(old, new)
    return text


def ecmp_engine_text():
    return replaced((ROOT / "configs" / "fabric-leaf-spine-ecmp.cfg").read_text(),
                    ("host_gbps = 1.0; uplink_gbps = 1.0;", "host_gbps = 0.5; uplink_gbps = 0.5;", 1))


def incast_engine_text():
    """The PFC-spread example with DCQCN on its four flows, the ECMP example's ECN at its switches
    and the CNP spacing of roce-ccsim's scenario (its default, written out)."""
    pfc = "pfc = { priorities = [3]; xoff_kb = 64; xon_kb = 48; headroom_kb = 128; };"
    ecn = "ecn = ( { tc = 3; kmin_kb = 16; kmax_kb = 96; pmax = 0.2; } );"
    rates = "host_gbps = 1.0; uplink_gbps = 1.0;"
    nic = "nic = { mtu = 1500; np = { min_time_between_cnps = 4; }; };"
    return replaced((ROOT / "configs" / "fabric-pfc-spread.cfg").read_text(),
                    ("rate_gbps = 0.9; }", 'rate_gbps = 0.9; cc = "dcqcn"; }', 4),
                    (pfc, pfc + "\n  " + ecn, 1), (rates, rates + "\n  " + nic, 1))


SCENARIOS = {
    "ecmp": (ecmp_engine_text, ROOT / "configs" / "ccsim" / "fabric-vs-engine-ecmp.cfg"),
    "incast": (incast_engine_text, ROOT / "configs" / "ccsim" / "fabric-vs-engine-incast.cfg"),
}


def machine_limited(rep):
    """Why the machine, not the network, set this run's rates (None when it did not)."""
    m = rep["fabric"]["machine"]
    held = held_up_s(rep) / rep["duration_s"]
    if m["machine_limited"] or held > 0.01:
        return "machine_limited %s (%s), lcores held up %.1f %% of the run" % (
            m["machine_limited"], ", ".join(m.get("limited_by") or [m.get("worst_port") or "-"]), 100 * held)
    return None


class Pair:
    """One scenario: roce-ccsim's run (once) and the engine's (once, or twice when the machine
    limited the first)."""

    def __init__(self, tmp, name):
        for p in (ccsim_path(), engine_path(), fabric_path()):
            if not p.exists():
                pytest.fail("%s not found (build it, or set $ROCE_CCSIM / $ROCE_ENGINE / $ROCE_FABRIC)" % p)
        text, self.sim_cfg = SCENARIOS[name]
        self.engine_cfg = tmp / (name + ".cfg")
        self.engine_cfg.write_text(text())
        out = tmp / (name + "-sim.json")
        r = subprocess.run([str(ccsim_path()), "-q", "-s", str(out), str(self.sim_cfg)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        self.sim = json.loads(out.read_text())
        self.eng = Engine(tmp)
        self.runs, self.limits = [], []

    def engine_run(self):
        rc, rep, out = self.eng.run_file(self.engine_cfg, "-d", DURATION_S, timeout=120)
        assert rc == 0 and rep is not None, out
        self.runs.append(rep)
        self.limits.append(machine_limited(rep))
        return rep

    def first(self):
        return self.runs[0] if self.runs else self.engine_run()

    def judged(self):
        """A run the machine carried: the first, or a second if the first was the machine's.
        When both were, the rate checks are skipped, saying why."""
        self.first()
        if self.limits[-1] and len(self.runs) < 2:
            self.engine_run()
        if self.limits[-1]:
            pytest.skip("the machine limited both engine runs (%s): rates not judged" % "; ".join(self.limits))
        return self.runs[-1]


@pytest.fixture(scope="module")
def ecmp(tmp_path_factory):
    return Pair(tmp_path_factory.mktemp("ccsim-vs-engine"), "ecmp")


@pytest.fixture(scope="module")
def incast(tmp_path_factory):
    return Pair(tmp_path_factory.mktemp("ccsim-vs-engine"), "incast")


# ---- helpers ------------------------------------------------------------------------------------------


def members(groups):
    """Flows per member of each switch's ECMP group, summed over its destinations (the engine lists
    a group per destination prefix, roce-ccsim and roce-fabric one per set of next hops)."""
    out = {}
    for g in groups:
        got = out.setdefault((g["switch"], tuple(g["members"])), [0] * len(g["members"]))
        for i, n in enumerate(g["flows"]):
            got[i] += n
    return out


def directions(links, tier=None):
    """{(link, direction): its counters}; a host link's b_to_a is its NIC sending."""
    return {(l["name"], d): l[d] for l in links if tier in (None, l["tier"]) for d in ("a_to_b", "b_to_a")}


def sim_util(x):
    return x["utilization"]["mean"]


def flows_by_pair(rep, sim):
    """{(src, dst): (engine's goodput, roce-ccsim's payload goodput)}, Gb/s."""
    eng = {(q["port"], q["receiver"]): q["goodput_gbps"] for q in rep["flows"]}
    return {(f["src"], f["dst"]): (eng[(f["src"], f["dst"])], f["goodput_gbps"] * PAYLOAD) for f in sim["flows"]}


def per_s(rep, sim):
    """Per second of each run: CE marks, CNPs, XOFFs sent (engine, roce-ccsim)."""
    dur, sim_s = rep["duration_s"], sim["duration_us"] / 1e6
    return {
        "ce": (sum(q["ecn_ce"] for q in rep["flows"]) / dur, sim["totals"]["ce_marked"] / sim_s),
        "cnp": (sum(q["cnp_rx"] for q in rep["flows"]) / dur, sum(f["counters"]["cnps"] for f in sim["flows"]) / sim_s),
        "xoff": (sum(sum(p["pfc_xoff_tx"]) for s in rep["fabric"]["switches"] for p in s["ports"]) / dur,
                 sum(s["xoff_sent"] for s in sim["fabric"]["switches"]) / sim_s),
    }


def paused_share(rep, sim, key):
    """The share of each run the sender of a link direction was paused: (engine, roce-ccsim)."""
    e, s = directions(rep["fabric"]["links"])[key], directions(sim["fabric"]["links"])[key]
    return sum(e["paused_ns"]) / 1e9 / rep["duration_s"], sum(s["paused_us"]) / 1e6 / (sim["duration_us"] / 1e6)


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def correlation(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def check_same_run(rep, sim, n_flows):
    """The same QPs between the same NICs, lossless in both."""
    assert len(rep["flows"]) == n_flows
    assert {(q["port"], q["receiver"], q["qpn"]) for q in rep["flows"]} == {
        (f["src"], f["dst"], f["qpn"]) for f in sim["flows"]}
    for k, x in directions(rep["fabric"]["links"]).items():
        assert x["dropped"] in (None, 0), (k, x)
    assert all(q["lost"] == 0 for q in rep["flows"])
    assert sim["totals"]["dropped"] == 0 and sim["totals"]["retransmitted"] == 0


def check_dcqcn_acts(rep, sim):
    """Marks, CNPs and cuts in the engine (CNPs never more than marks: the notification point
    answers CE marks), marks and CNPs in roce-ccsim."""
    rates = per_s(rep, sim)
    cuts = sum(q["cc"]["cuts"] for q in rep["flows"])
    assert rates["ce"][0] > 0 and 0 < rates["cnp"][0] <= rates["ce"][0] and cuts > 0, (rates, cuts)
    assert rates["ce"][1] > 0 and rates["cnp"][1] > 0, rates
    return rates


# ---- ecmp: the all-to-all ------------------------------------------------------------------------------


def test_ecmp_both_files_route_every_flow_alike(ecmp, tmp_path):
    """roce-fabric reads both files: every flow (source, destination, QPN, UDP source port) takes the
    same path through the same ECMP members, so the hash sees the same 5-tuples in both programs."""
    plans = []
    for cfg in (ecmp.engine_cfg, ecmp.sim_cfg):
        rep = tmp_path / (cfg.name + ".json")
        r = subprocess.run([str(fabric_path()), "-q", "-r", str(rep), str(cfg)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        plans.append(json.loads(rep.read_text()))
    flows = [sorted((f["src"], f["dst"], f["dest_qpn"], f["udp_sport"], tuple(h["link"] for h in f["path"]))
                    for f in p["flows"]) for p in plans]
    assert len(flows[0]) == 240 and flows[0] == flows[1]
    planned = members(plans[0]["ecmp_groups"])
    assert planned == members(plans[1]["ecmp_groups"])
    # the hash does not split each leaf's 48 flows evenly: collisions for the runs to show
    assert max(max(m) for m in planned.values()) >= 30, planned


def test_ecmp_same_flows_on_the_same_members_and_nothing_lost(ecmp):
    rep, sim = ecmp.first(), ecmp.sim
    check_same_run(rep, sim, 240)
    assert members(rep["fabric"]["ecmp_groups"]) == members(sim["fabric"]["ecmp_groups"])


def test_ecmp_dcqcn_ecn_and_pfc_act_in_both(ecmp):
    """DCQCN is at work in both, so is PFC; the marks fall on the same uplink directions: the five
    the hash loaded most (each leaf's way to spine1, and spine1's to leaf2)."""
    rep, sim = ecmp.first(), ecmp.sim
    check_dcqcn_acts(rep, sim)
    assert per_s(rep, sim)["xoff"][0] > 0 and sim["totals"]["pauses"] > 0
    top = []
    for links in (rep["fabric"]["links"], sim["fabric"]["links"]):
        marks = sorted(((x["ecn_marked"], k) for k, x in directions(links, "leaf").items()), reverse=True)
        top.append({k for _, k in marks[:5]})
    assert top[0] == top[1], top
    assert ("leaf2-spine1", "a_to_b") in top[1] and ("leaf2-spine1", "b_to_a") in top[1]


@pytest.mark.release_only  # rates that need the release build's loop turns
def test_ecmp_rates_marks_and_pauses_agree(ecmp):
    rep, sim = ecmp.judged(), ecmp.sim
    pairs = flows_by_pair(rep, sim)
    eg, sg = [pairs[k][0] for k in sorted(pairs)], [pairs[k][1] for k in sorted(pairs)]
    el, sl = directions(rep["fabric"]["links"], "leaf"), directions(sim["fabric"]["links"], "leaf")
    eh, sh = directions(rep["fabric"]["links"], "host"), directions(sim["fabric"]["links"], "host")
    nics = [k for k in eh if k[1] == "b_to_a"]
    fig = dict(per_s(rep, sim), goodput=(sum(eg), sum(sg)), median_flow=(statistics.median(eg), statistics.median(sg)),
               jfi=(jain(eg), jain(sg)), r_flows=correlation(eg, sg),
               flow_ratio=(min(e / s for e, s in zip(eg, sg)), max(e / s for e, s in zip(eg, sg))),
               nic_paused=tuple(statistics.mean(paused_share(rep, sim, k)[i] for k in nics) for i in (0, 1)))
    print("ecmp, engine / roce-ccsim:", json.dumps(fig))
    # the total within 15 % (measured 0.91: the engine's NICs are paused a little longer, 50 % of the
    # run against 45 %, as its switches and NICs take an XOFF and an XON at their next loop turn,
    # some 20 us here, where the simulation's take a link delay)
    assert 0.85 <= fig["goodput"][0] / fig["goodput"][1] <= 1.15, fig
    # the uplink directions the simulation fills (where ECMP put most flows) at 88 % or more in the
    # engine (measured 0.93-1.00); every uplink direction within 0.15 of the simulation's (measured
    # -0.10..+0.01: an uplink that is no bottleneck carries what its NICs send); each NIC within
    # 0.12 (-0.06..+0.07)
    for k, x in sl.items():
        assert abs(el[k]["utilization"] - sim_util(x)) <= 0.15, (k, el[k]["utilization"], sim_util(x))
        if sim_util(x) >= 0.95:
            assert el[k]["utilization"] >= 0.88, (k, el[k]["utilization"], sim_util(x))
    for k in nics:
        assert abs(eh[k]["utilization"] - sim_util(sh[k])) <= 0.12, (k, eh[k]["utilization"], sim_util(sh[k]))
    # the flows: each within -30 %..+25 % of its simulated goodput (measured 0.81-1.09), the same
    # ones fast and slow (the collisions and pauses ECMP made: correlation 0.97), the median within
    # 20 % (0.89-0.90), Jain's index within 0.05 (0.92-0.93 and 0.94). (An engine whose NIC sent a
    # QP as many frames a visit as its pacing credit allowed, before 17f3b6a, gave QPs of one rate
    # shares up to 3 to 1: correlation 0.75-0.79, flows down to a third.)
    assert 0.7 <= fig["flow_ratio"][0] and fig["flow_ratio"][1] <= 1.25, fig
    assert fig["r_flows"] >= 0.9, fig
    assert 0.8 <= fig["median_flow"][0] / fig["median_flow"][1] <= 1.2, fig
    assert abs(fig["jfi"][0] - fig["jfi"][1]) <= 0.05, fig
    # the marks are the queues' (the same RED on the same queues): within 20 % (measured 0.94); the
    # engine's CNPs fewer (0.82-0.93): its notification point spaces a QP's CNPs 4 us apart by the
    # time it reads each frame, and a QP's frames that came in during one loop turn are read
    # together (at 1 Gb/s, frames 8.9 us apart on the wire, it answers only 27-54 % of them)
    assert 0.8 <= fig["ce"][0] / fig["ce"][1] <= 1.2, fig
    assert 0.6 <= fig["cnp"][0] / fig["cnp"][1] <= 1.1, fig
    # PFC: pauses within a factor 2 (measured 0.78-0.82), the NICs paused about half the run in both
    # (0.50 and 0.45: the head-of-line blocking of the colliding flows), within 0.15
    assert 0.5 <= fig["xoff"][0] / fig["xoff"][1] <= 2.0, fig
    assert abs(fig["nic_paused"][0] - fig["nic_paused"][1]) <= 0.15, fig
    # the queue PFC bounds: each leaf's deepest toward spine1, its congested uplink (its hosts' xoff
    # and more), within -15 %..+30 % (measured +0..+18 %: the engine's senders stop at their next
    # loop turn after an XOFF)
    for leaf in ("leaf0", "leaf1", "leaf2", "leaf3"):
        es = next(s for s in rep["fabric"]["switches"] if s["name"] == leaf)
        ss = next(s for s in sim["fabric"]["switches"] if s["name"] == leaf)
        eq = max(next(p for p in es["ports"] if p["port"] == "spine1")["max_queue_bytes"])
        sq = next(q for q in ss["queues"] if q["port"] == "spine1")["max_bytes"]
        assert 0.85 <= eq / sq <= 1.3, (leaf, eq, sq)


# ---- incast: DCQCN sets the rates -------------------------------------------------------------------


INCAST = ("h1", "h2", "h5")


def test_incast_dcqcn_acts_in_both_and_nothing_is_lost(incast):
    rep, sim = incast.first(), incast.sim
    check_same_run(rep, sim, 4)
    check_dcqcn_acts(rep, sim)
    assert rep["fabric"]["ecmp_groups"] == [] and sim["fabric"]["ecmp_groups"] == []   # one spine: one path each
    # every sender into h0 is marked and cut, in both
    for q in rep["flows"]:
        if q["port"] in INCAST:
            assert q["ecn_ce"] > 0 and q["cnp_rx"] > 0 and q["cc"]["cuts"] > 0, q
    for f in sim["flows"]:
        if f["src"] in INCAST:
            assert f["counters"]["ce_marked"] > 0 and f["counters"]["cnps"] > 0, f
    # the marks are at h0's port, in both
    for links in (rep["fabric"]["links"], sim["fabric"]["links"]):
        assert directions(links)[("h0-leaf0", "a_to_b")]["ecn_marked"] > 0


@pytest.mark.release_only  # rates that need the release build's loop turns
def test_incast_rates_agree(incast):
    """With one QP a NIC and few enough frames for the engine's lcore, the two agree closely:
    measured within 3 % per flow, 8 % on the marks, CNPs and h0's queue."""
    rep, sim = incast.judged(), incast.sim
    pairs = flows_by_pair(rep, sim)
    rates = per_s(rep, sim)
    h0 = [directions(r["fabric"]["links"])[("h0-leaf0", "a_to_b")] for r in (rep, sim)]
    h3 = paused_share(rep, sim, ("h3-leaf1", "b_to_a"))
    queue = (max(next(p for p in next(s for s in rep["fabric"]["switches"] if s["name"] == "leaf0")["ports"]
                      if p["port"] == "h0")["max_queue_bytes"]),
             next(q for q in next(s for s in sim["fabric"]["switches"] if s["name"] == "leaf0")["queues"]
                  if q["port"] == "h0")["max_bytes"])
    print("incast, engine / roce-ccsim:", json.dumps(dict(rates, flows={"%s>%s" % k: v for k, v in pairs.items()},
                                                          h0_util=(h0[0]["utilization"], sim_util(h0[1])),
                                                          h3_paused=h3, h0_queue_peak=queue)))
    # h0's port is the bottleneck and full in both (measured 0.999-1.000)
    assert h0[0]["utilization"] >= 0.95 and sim_util(h0[1]) >= 0.95, h0
    # the incast's flows each within 10 % (measured 3 %: local and far2 0.35 Gb/s, far 0.23 in
    # both: DCQCN's rates frozen apart, docs/ccsim.md), together within 5 %
    into_h0 = [v for k, v in pairs.items() if k[1] == "h0"]
    assert len(into_h0) == 3
    assert 0.95 <= sum(e for e, _ in into_h0) / sum(s for _, s in into_h0) <= 1.05, pairs
    for e, s in into_h0:
        assert 0.9 <= e / s <= 1.1, pairs
    # innocent: DCQCN slowed the incast so that PFC seldom stops innocent's NIC (measured paused
    # 0.6-1.2 % of the run in both, 0.68-0.70 Gb/s; with PFC alone it is paused 73 % of the time
    # and gets 0.23 Gb/s, docs/fabric.md)
    e, s = pairs[("h3", "h4")]
    assert e >= 0.5 and s >= 0.5 and 0.9 <= e / s <= 1.1, (e, s)
    assert h3[0] <= 0.05 and h3[1] <= 0.05, h3
    # the marks and CNPs within 25 % (measured 0.92-1.02), h0's queue peak within 20 % (0.97-1.08:
    # 122-134 KB and 125 KB); the XOFFs within a factor 3 (0.49-1.44: a few hundred a second, from
    # the moments the queue outgrows the marking, how many depends on a loop turn's timing; a
    # machine that holds the lcore up makes thousands)
    assert 0.75 <= rates["ce"][0] / rates["ce"][1] <= 1.33, rates
    assert 0.75 <= rates["cnp"][0] / rates["cnp"][1] <= 1.33, rates
    assert 0.8 <= queue[0] / queue[1] <= 1.25, queue
    assert 1 / 3 <= rates["xoff"][0] / rates["xoff"][1] <= 3.0, rates

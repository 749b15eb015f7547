"""roce-suite's AI-fabric suite (docs/ai-fabric.md) on the shipped CI suite,
configs/suites/ai-fabric-ci.cfg: two leaves of four hosts, two spines, 1 Gb/s links. It runs
once (a module fixture, its trials kept) and each test holds one part of its report against what
the fabric's settings imply, computed here independently:

* §13: the results folder has report.json with the seven sections, report.md with their headings
  and every graph the report names; exit status 0 (no verdict failed).
* §5.1: no zero-loss throughput above what its bottleneck carries (at most roce-fabric's plan, and
  at most the uplinks' 2 Gb/s one way, 4 both ways, of the cross-spine pairs).
* §5.2: the zero-load minimum one-way latency is at least the path's propagation delay (1 + 2 + 2 +
  1 us, from the fabric group), the percentiles are ordered, the histogram holds every sample.
* §5.3: a 3:1 burst's capacity per sender bracketed by the search around the buffer's
  1536 KiB / (2 x 1102-byte frames) = 713 frames; each trial's peak queue at the destination's
  port (2 x B frames queued at the burst's end) recomputed from its engine report.
* §7.2: the destination of each N:1 incast receives at most its link; the per-hop XOFF table
  recomputed from the trial's engine report (each link direction named by its ends' tiers from
  the report's nics and switches); the senders picked from the other leaf first; nothing dropped
  on the lossless class unless machine-limited, and a 7:1 incast pauses the senders.
* §8.1: each ECMP group's flow MMR is inside the range an exact balls-into-bins computation (here,
  by counting the placements in integers: a second method) gives; with one UDP source port and no BTH hashing a
  pair's QPs share a member, with BTH hashing they spread.
* §8.3: spraying counts every flow on every member and reorders frames.
* §9: busBW recomputed from each trial's engine report (its phase end times) matches, with the
  algorithm factor 2(N-1)/N or (N-1)/N; never above the link.
* §7 (repeatability): CV = sample sd / mean of the values, flagged above 5 %.
* errors: a bad ai_fabric setting names FILE:LINE: SETTING (exit 3) before any trial.
"""
import collections
import csv
import json
import math
import os
import statistics
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import engine_path

pytestmark = pytest.mark.release_only

ROOT = Path(__file__).resolve().parents[2]
CI_SUITE = ROOT / "configs" / "suites" / "ai-fabric-ci.cfg"
GRAPHS = ["topology.png", "throughput.png", "latency_cdf.png", "latency_histogram.png", "ecmp_mmr.png",
          "ecmp_jfi.png", "flowlet_gap.png", "jfi_comparison.png", "collectives_busbw.png",
          "collectives_iterations.png", "pfc_incast_pauses.png", "pfc_incast_throughput.png", "burst_absorption.png",
          "convergence_rates.png", "convergence_time.png", "ecn_marking.png", "jct_ratio.png", "interference.png",
          "link_failure.png", "soak_busbw.png", "soak_memory.png"]


def suite_path():
    return Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite")).resolve()


def run_suite(cfg, tmp, *args, timeout=900):
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()))
    return subprocess.run([str(suite_path()), str(cfg), "-r", str(tmp / "suite.json"), "-o", str(tmp / "res"),
                           *args], capture_output=True, text=True, timeout=timeout, cwd=str(tmp), env=env)


@pytest.fixture(scope="module")
def ci(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("aif")
    p = run_suite(CI_SUITE, tmp, "-k", str(tmp / "trials"), "-q")
    rep = json.loads((tmp / "res" / "report.json").read_text()) if (tmp / "res" / "report.json").exists() else None
    return p, rep, tmp


def results(rep, cat):
    return rep["ai_fabric"]["sections"]["5_results"][cat]


def trial_report(tmp, rep, label_start):
    """The engine reports of the kept trials whose label starts so."""
    out = []
    for t in rep["trials"]:
        if t["label"].startswith(label_start) and t.get("report"):
            out.append(json.loads(Path(t["report"]).read_text()))
    return out


def test_the_report_has_its_seven_sections_and_graphs(ci):
    p, rep, tmp = ci
    assert p.returncode == 0, p.stdout + p.stderr
    secs = rep["ai_fabric"]["sections"]
    assert sorted(secs) == ["1_dut", "2_topology", "3_dut_configuration", "4_host_configuration", "5_results",
                            "6_anomalies", "7_repeatability"]
    assert sorted(secs["5_results"]) == sorted(["throughput", "latency", "burst", "ecn", "pfc_incast", "convergence",
                                                "deadlock", "ecmp", "flowlet", "spray", "collectives", "jct",
                                                "interference", "link_failure", "soak"])
    topo = secs["2_topology"]
    assert topo["hosts"] == 8 and len(topo["switches"]) == 4 and len(topo["links"]) == 12
    assert {s["name"]: s["oversubscription"] for s in topo["switches"]}["leaf0"] == 2.0   # 4 down, 2 up
    md = (tmp / "res" / "report.md").read_text()
    for h in ["## 1. Device under test", "## 2. Topology and cabling", "## 3. DUT configuration",
              "## 4. Host configuration", "## 5. Results", "## 6. Anomalies and deviations", "## 7. Repeatability"]:
        assert h in md
    for g in GRAPHS:
        f = tmp / "res" / g
        assert f.exists() and f.stat().st_size > 5000, g
        assert g in md
    # every verdict of the run is in the report, none failed
    assert rep["verdicts"] and all(v["verdict"] == "pass" for v in rep["verdicts"])
    assert rep["ai_fabric"]["thresholds"] and all(t["pass"] for t in rep["ai_fabric"]["thresholds"])


def test_zero_loss_throughput_is_at_most_the_bottleneck(ci):
    _, rep, _ = ci
    rows = results(rep, "throughput")["rows"]
    assert len(rows) == 2                                   # 1 size x 1 Q x uni, bi
    for r in rows:
        # 65536-byte WRITEs at an IB MTU of 1024: 64 packets of 1024 + 62 bytes, one RETH (16):
        # what a 1 Gb/s link carries in the engine's rate unit (frames without preamble and gap)
        msg = 65536 + 64 * 62 + 16
        frame_gbps = 1.0 * msg / (msg + 64 * 20)
        uplinks = 2 * frame_gbps * (2 if r["direction"] == "bi" else 1)
        assert r["expected_gbps"] <= uplinks * 1.001, r
        assert r["zero_loss_gbps"] <= r["expected_gbps"] * 1.02 + 1e-9, r
        assert r["trials"] >= 1
        if not r.get("machine_limited"):
            assert r["zero_loss_gbps"] > 0, r


def test_latency_at_least_the_path_delay_and_ordered(ci):
    _, rep, tmp = ci
    lat = results(rep, "latency")
    zero = next(r for r in lat["rows"] if r["load"] == "zero")
    full = next(r for r in lat["rows"] if r["load"] == "full")
    assert zero["repeats"] == 2 and full["repeats"] == 2
    # h0 -> leaf0 -> spine -> leaf1 -> h4: host 1 us, uplink 2 us, uplink 2 us, host 1 us
    assert zero["min_us"] >= 6.0, zero
    for r in (zero, full):
        assert r["min_us"] <= r["p50_us"] <= r["p95_us"] <= r["p99_us"] <= r["p99_9_us"] <= r["max_us"] + 1e-9, r
    g = next(g for g in rep["ai_fabric"]["graphs"] if g["file"] == "latency_histogram.png")
    assert sum(sum(s["y"]) for s in g["series"]) == zero["samples"] + full["samples"]
    # the per-trial sample counts are the engine's: each kept trial's latency.csv rows
    for t in rep["trials"]:
        if t["kind"] == "latency":
            rows = (Path(t["config"]).parent / "latency.csv").read_text().count("\n") - 1
            assert t["samples"] == rows


def bins_mmr_q995(balls, bins):
    """The 99.5 % quantile of max/mean for balls thrown into bins, by counting: the ways to put
    `balls` labelled balls into `bins` bins with none above k, over bins^balls (exact integers)."""
    for k in range(math.ceil(balls / bins), balls + 1):
        ways = [1] + [0] * balls                       # 0 bins: only no ball
        for _ in range(bins):
            ways = [sum(math.comb(r, c) * ways[r - c] for c in range(min(k, r) + 1)) for r in range(balls + 1)]
        if Fraction(ways[balls], bins ** balls) >= Fraction(995, 1000):
            return k * bins / balls
    return bins


def test_ecmp_groups_spread_as_balls_into_bins(ci):
    _, rep, tmp = ci
    ecmp = results(rep, "ecmp")
    runs = {r["run"]: r for r in ecmp["rows"]}
    assert sorted(runs) == ["ecmp 5-tuple, 1 QP", "ecmp 5-tuple, 8 QPs", "ecmp bth, 1 QP", "ecmp bth, 8 QPs"]
    checked = 0
    for r in ecmp["rows"]:
        for g in r["ecmp_groups"]:
            flows = g["flows"]
            e = g["expected_mmr_flows"]
            assert e["q995"] == pytest.approx(bins_mmr_q995(e["balls"], len(flows)), rel=1e-9)
            assert max(flows) * len(flows) / sum(flows) <= e["q995"] + 1e-9
            checked += 1
    assert checked >= 8                                    # 2 leaves x 4 runs
    # one UDP source port for every QP (ecmp.udp_sport): without the BTH's QP in the hash a pair's
    # 8 QPs take one uplink together; with it they spread. Each flow's uplink is in roce-fabric's
    # plan of the trial (kept beside the trials), and the plan's count per uplink is the engine's.
    for run, together in (("5-tuple", True), ("bth", False)):
        plan = json.loads((tmp / "trials" / ("plan-lb-ecmp-8-%s-0.json" % ("5t" if together else "bth"))).read_text())
        uplink = {}
        for f in plan["flows"]:
            up = [h["to"] for h in f["path"] if h["from"].startswith("leaf") and h["to"].startswith("spine")]
            if up:
                uplink.setdefault((f["src"], f["dst"]), set()).add(up[0])
        assert len(uplink) == 32                               # 4 x 4 pairs across each way
        assert all(len(u) == 1 for u in uplink.values()) == together, run
        engine = {g["switch"]: dict(zip(g["members"], g["flows"])) for g in runs["ecmp %s, 8 QPs" % run]["ecmp_groups"]}
        for leaf, members in engine.items():
            planned = {m: 0 for m in members}
            for f in plan["flows"]:
                for h in f["path"]:
                    if h["from"] == leaf and h["to"] in planned:
                        planned[h["to"]] += 1
            assert planned == members, (run, leaf)


def test_spraying_uses_every_member_and_reorders(ci):
    _, rep, _ = ci
    spray = results(rep, "spray")["rows"][0]
    for g in spray["ecmp_groups"]:
        assert len(set(g["flows"])) == 1 and g["flows"][0] > 0
    assert spray["out_of_order_rate"] > 0
    flowlet = results(rep, "flowlet")["rows"]
    assert [r["flowlet_gap_us"] for r in flowlet] == [20, 200]
    jfi = next(g for g in rep["ai_fabric"]["graphs"] if g["file"] == "jfi_comparison.png")
    assert len(jfi["labels"]) == 4 + 2 + 1


def test_collectives_busbw_from_the_engines_phase_times(ci):
    _, rep, tmp = ci
    rows = {r["op"]: r for r in results(rep, "collectives")["rows"]}
    assert sorted(rows) == ["allgather", "allreduce", "alltoall"]
    n, size = 8, 524288
    factor = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n, "alltoall": (n - 1) / n}
    phases = {"allreduce": 2 * (n - 1), "allgather": n - 1, "alltoall": 1}
    for op, r in rows.items():
        assert r["iterations_completed"] == r["iterations"] == 10
        assert r["algo_factor"] == pytest.approx(factor[op])
        eng = trial_report(tmp, rep, op + " of ")[0]
        coll = eng["collectives"][0]
        assert coll["phases_completed"] == 10 * phases[op]
        assert eng["stopped_by"] == "flows_done"          # the phases end the run
        ends = coll["phase_end_us"]
        prev, busbw = 0.0, []
        for i in range(10):
            end = ends[(i + 1) * phases[op] - 1]
            busbw.append(size * factor[op] * 8 / ((end - prev) / 1e6) / 1e9)
            prev = end
        assert r["busbw_per_iteration_gbps"] == pytest.approx(busbw, rel=1e-6)
        assert r["busbw_mean_gbps"] == pytest.approx(statistics.mean(busbw), rel=1e-6)
        assert r["busbw_mean_gbps"] <= 1.0


def test_repeatability_is_the_sample_cv(ci):
    _, rep, _ = ci
    rows = rep["ai_fabric"]["sections"]["7_repeatability"]
    kpis = {r["kpi"] for r in rows}
    assert {"aggregate_throughput_gbps", "p99_latency_us_zero_load", "busbw_gbps_allreduce"} <= kpis
    for r in rows:
        v = r["values"]
        assert r["iterations"] == len(v)
        if len(v) > 1:
            cv = statistics.stdev(v) / statistics.mean(v)
            # (the values in the report have 10 digits: a CV near 0 is compared absolutely)
            assert r["cv"] == pytest.approx(cv, rel=1e-6, abs=1e-7)
            assert r["flagged"] == (cv > 0.05)
            if r["flagged"]:
                assert any(r["kpi"] in a["what"] for a in rep["ai_fabric"]["sections"]["6_anomalies"])


@pytest.mark.parametrize("text,where,setting", [
    ('ai_fabric = { categories = ["throughput", "nosuch"]; };', 3, "ai_fabric.categories.[1]"),
    ('ai_fabric = { ecmp = { qps_per_pair = [0]; }; };', 3, "ai_fabric.ecmp.qps_per_pair.[0]"),
    ('ai_fabric = { flowlet = { gaps_us = []; }; };', 3, "ai_fabric.flowlet.gaps_us"),
    ('thresholds = { min_jfi = 2.0; };', 3, "thresholds.min_jfi"),
    ('dut = { asic = 7; };', 3, "dut.asic"),
    ('ai_fabric = { pfc_incast = { ratios = [0]; }; };', 3, "ai_fabric.pfc_incast.ratios.[0]"),
    ('ai_fabric = { pfc_incast = { priority = 9; }; };', 3, "ai_fabric.pfc_incast.priority"),
    ('ai_fabric = { burst = { message_size = 2048; }; };', 3, "ai_fabric.burst.message_size"),
    ('ai_fabric = { convergence = {\n dcqcn = ( { rpg_ai_rate = -1; } ); }; };', 4,
     "ai_fabric.convergence.dcqcn.[0].rpg_ai_rate"),
    ('ai_fabric = { convergence = {\n dcqcn = ( { profile = "nvidia"; g = 0.5; } ); }; };', 4,
     "ai_fabric.convergence.dcqcn.[0].g"),
    ('ai_fabric = { convergence = { settle_s = 0.1;\n hold_ms = 100; }; };', 4, "ai_fabric.convergence.hold_ms"),
    ('ai_fabric = { ecn = { cc = "timely"; }; };', 3, "ai_fabric.ecn.cc"),
    ('ai_fabric = { deadlock = { patterns = ["shift", "shift"]; }; };', 3, "ai_fabric.deadlock.patterns.[1]"),
    ('thresholds = { max_deadlock_ms = -1; };', 3, "thresholds.max_deadlock_ms"),
    ('ai_fabric = { deadlock = { storm = { start_s = 0.1;\n duration_s = 0; }; }; };', 4,
     "ai_fabric.deadlock.storm.duration_s"),
    ('ai_fabric = { deadlock = { storm = { period_s = 1.0; }; }; };', 3, "ai_fabric.deadlock.storm.period_s"),
    ('thresholds = { max_storm_paused_ms = -5; };', 3, "thresholds.max_storm_paused_ms"),
    ('ai_fabric = { balance_command = "set-lb {mode} {gap_us}"; };', 3, "ai_fabric.balance_command"),
    ('ai_fabric = { balance_command = "%s"; };' % ("{mode}" * 20 + "x" * 130), 3, "ai_fabric.balance_command"),
    ('ai_fabric = { jct = { ranks = [8, 1]; }; };', 3, "ai_fabric.jct.ranks.[1]"),
    ('ai_fabric = { interference = { overlaps = [1.5]; }; };', 3, "ai_fabric.interference.overlaps.[0]"),
    ('thresholds = { max_interference_factor = 0.5; };', 3, "thresholds.max_interference_factor"),
    ('ai_fabric = { link_failure = { failures = ["spine", "core"]; }; };', 3, "ai_fabric.link_failure.failures.[1]"),
    ('ai_fabric = { soak = { duration_s = 10.0;\n interval_s = 6.0; }; };', 4, "ai_fabric.soak.interval_s"),
    ('ai_fabric = { link_failure = { iterations = 8;\n fail_iteration = 8; }; };', 4,
     "ai_fabric.link_failure.fail_iteration"),
])
def test_a_bad_setting_names_file_line_and_setting(tmp_path, text, where, setting):
    cfg = tmp_path / "s.cfg"
    cfg.write_text('suite = { name = "x"; type = "ai_fabric"; };\n'
                   'fabric = { kind = "leaf-spine"; leaves = 2; spines = 1; hosts_per_leaf = 1; };\n' + text + "\n")
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith("%s:%d: %s: " % (cfg, where, setting)), p.stderr


def test_a_fabric_the_engine_cannot_run_is_refused_by_check(tmp_path):
    """--check runs roce-engine --check on a trial of the fabric: a leaf of 12 hosts and 8 spines
    has 20 ports, more than a lab switch's 16, so no trial of it could start."""
    cfg = tmp_path / "s.cfg"
    cfg.write_text('suite = { name = "x"; type = "ai_fabric"; };\n'
                   'fabric = { kind = "leaf-spine"; leaves = 1; spines = 8; hosts_per_leaf = 12; };\n')
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ROCE_ENGINE=str(engine_path().resolve())))
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith("%s:2: fabric: switch leaf0 has 20 ports" % cfg), p.stderr
    assert "at most 16" in p.stderr and "roce-engine --check on a trial" in p.stderr, p.stderr


def test_a_suite_without_a_fabric_is_refused(tmp_path):
    cfg = tmp_path / "s.cfg"
    cfg.write_text('suite = { name = "x"; type = "ai_fabric"; };\n')
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and "fabric: missing" in p.stderr, p.stderr


def _hops_from_report(er, prio=3):
    """Per hop (receiving end's tier -> sending end's tier) the XOFF frames of `prio`, from an engine
    report alone: the tiers from fabric.nics[] and fabric.switches[]."""
    fab = er["fabric"]
    tier = {n["name"]: "nic" for n in fab["nics"]}
    tier.update({s["name"]: s["tier"] for s in fab["switches"]})
    hops = {}
    for l in fab["links"]:
        for d in ("a_to_b", "b_to_a"):
            x = l[d]
            xoff = (x["pfc_xoff_sent"] or [0] * 8)[prio]   # null where a NIC receives
            if not x["frames"] and not xoff:
                continue
            h = hops.setdefault("%s->%s" % (tier[x["to"]], tier[x["from"]]), [0, 0])
            h[0] += xoff
            h[1] += 1
    return hops


def test_pfc_incast_per_hop_pauses_recomputed(ci):
    _, rep, tmp = ci
    inc = results(rep, "pfc_incast")
    assert inc["section"] == "7.2" and inc["destination"] == "h7" and inc["priority"] == 3
    rows = {r["ratio"]: r for r in inc["rows"]}
    assert sorted(rows) == [3, 7]
    link = 1.0
    for n, r in rows.items():
        assert r["ran"] and r["received_gbps"] <= link * 1.02, r
        ers = trial_report(tmp, rep, "%d:1 incast" % n)
        assert ers, n
        er = ers[0]
        # the senders: one of leaf0 before leaf1's own (h7's leaf), all writing to h7
        senders = sorted({f["name"].split("-")[1] for f in er["flows"]})
        want = {3: ["h0", "h1", "h2"], 7: ["h0", "h1", "h2", "h3", "h4", "h5", "h6"]}[n]
        assert senders == want, senders
        hops = _hops_from_report(er)
        assert {h["hop"]: [h["xoff"], h["links"]] for h in r["hops"]} == hops
        assert sum(h["xoff"] for h in r["hops"]) <= r["pfc_xoff"]
        assert r["hops_paused"] == sum(1 for v in hops.values() if v[0] > 0)
        assert r["dropped"] == sum(x["dropped"] or 0 for l in er["fabric"]["links"] for x in (l["a_to_b"], l["b_to_a"]))
        if not r.get("machine_limited"):
            assert r["dropped"] == 0, r                       # lossless class: PFC with headroom
        if n == 7 and not r.get("machine_limited"):
            # seven senders at line rate into one 1 Gb/s link: h7's leaf must pause someone
            assert hops.get("leaf->nic", [0])[0] + hops.get("leaf->spine", [0])[0] > 0, hops
    assert inc["storm_onset_ratio"] is None                   # no watchdog in the CI suite's switches


def test_burst_capacity_is_what_the_buffer_holds(ci):
    _, rep, tmp = ci
    b = results(rep, "burst")
    assert b["section"] == "5.3" and b["priority"] == 0 and b["max_frames"] == 1000
    (row,) = b["rows"]
    # one 1024-byte WRITE per frame: 1024 + 62 (Ethernet, IPv4, UDP, BTH, ICRC, FCS) + 16 (RETH)
    frame = 1024 + 62 + 16
    assert row["ratio"] == 3 and row["frame_bytes"] == frame and row["threshold_bytes"] == 1536 * 1024
    expected = (1536 * 1024) // (2 * frame)
    assert row["expected_frames"] == expected == 713
    assert row["trials"] == 4                               # 1000, 500, 750, then 625 or 875
    lo, hi = row["absorbed_frames"], row["first_loss_frames"]
    assert 0 < lo < hi <= 1000 and hi - lo == 125, row        # four bisection steps from 1..1000
    for er_t in [t for t in rep["trials"] if t["label"].startswith("3:1 burst of")]:
        er = json.loads(Path(er_t["report"]).read_text())
        frames = int(er_t["label"].split(" of ")[1].split()[0])
        senders = sorted({f["name"].split("-")[1] for f in er["flows"]})
        assert senders == ["h4", "h5", "h6"], senders       # h7's own leaf
        assert all(f["tx_packets"] == frames for f in er["flows"])
        port = next(p for s in er["fabric"]["switches"] for p in s["ports"] if p["port"] == "h7")
        peak = port["max_queue_bytes"][0]
        if not (row.get("machine_limited") or er["fabric"]["machine"]["machine_limited"]):
            # three senders, one leaving: 2 x frames queued at the burst's end, or the threshold
            assert peak <= 1536 * 1024 and peak >= min(2 * frames, 1536 * 1024 // frame) * frame * 0.9, (frames, peak)
    if not row.get("machine_limited"):
        assert lo <= expected * 1.05 + 1 and hi >= expected * 0.95 - 1, row
        assert row["first_loss"]["dropped_at_destination_port"] > 0


def _windowed(rows, n_flows, w_s, n_windows):
    """Each flow's mean rate per window (a window without a sample holds the previous one's)."""
    sums = collections.defaultdict(float)
    cnt = collections.defaultdict(int)
    for t, f, g in rows:
        k = int(t // w_s)
        if 0 <= t and k < n_windows:
            sums[k, f] += g
            cnt[k, f] += 1
    out, prev = [], [0.0] * n_flows
    for k in range(n_windows):
        prev = [sums[k, f] / cnt[k, f] if cnt[k, f] else prev[f] for f in range(n_flows)]
        out.append(((k + 1) * w_s, prev))
    return out


def _held(series, fair, tol, onset, hold):
    start = None
    for t, v in series:
        if t < onset:
            continue
        if not all(fair * (1 - tol) <= x <= fair * (1 + tol) for x in v):
            start = None
            continue
        start = t if start is None else start
        if t - start >= hold - 1e-12:
            return start - onset
    return None


def test_convergence_recomputed_from_the_traces_and_ccsim(ci):
    """§7.3: each engine run's time from its own cc trace, and roce-ccsim's mean from the seeds' CSVs,
    recomputed here (windows of 5 ms, within 10 % of link / 4 for 20 ms after the join at 0.1 s)."""
    _, rep, tmp = ci
    c = results(rep, "convergence")
    assert c["section"] == "7.3" and c["destination"] == "h7" and c["join_s"] == 0.1
    (row,) = c["rows"]
    assert row["m"] == 2 and row["flows"] == 4 and row["runs"] + row["machine_limited_runs"] == 8
    # 65536-byte WRITEs: 64 frames of 1024 + 62 bytes and one RETH, on a 1 Gb/s link with 20 bytes of
    # preamble and gap per frame, shared by four
    frames = 65536 + 64 * 62 + 16
    fair = frames / (frames + 64 * 20) / 4
    assert row["fair_gbps"] == pytest.approx(fair, rel=1e-9)
    trials = [t for t in rep["trials"] if t["label"].startswith("2 + 2 DCQCN flows")]
    assert len(trials) == 8
    got = []
    for t in trials:
        er = json.loads(Path(t["report"]).read_text())
        if er["fabric"]["machine"]["machine_limited"] or er["cc_trace"]["dropped"]:
            continue
        flows = er["flows"]
        # the two that start with the traffic, then the two that join: h7's own leaf first (h4, h5,
        # h6), then h0 across the spines
        assert [f["name"].split("-")[-2] for f in flows] == ["h4", "h5", "h6", "h0"], [f["name"] for f in flows]
        t0 = er["start_unix_ns"]
        rows = []
        with open(Path(t["report"]).parent / "cc.csv") as fh:
            for r in csv.DictReader(fh):
                ts = (int(r["time_ns"]) - t0) / 1e9
                if r["event"] in ("interval", "start") and (int(r["qp"]) < 2 or ts >= 0.1):
                    rows.append((ts, int(r["qp"]), float(r["rate_gbps"])))
        series = _windowed(rows, 4, 0.005, int(er["duration_s"] / 0.005 + 1e-9))
        conv = _held(series, fair, 0.1, 0.1, 0.02)
        got.append(None if conv is None else conv * 1e3)
    assert len(got) == row["runs"]
    assert [None if g is None else pytest.approx(g, abs=1e-6) for g in got] == row["convergence_ms_each"]
    settled = [g for g in got if g is not None]
    assert row["settled_runs"] == len(settled)
    if settled:
        assert row["convergence_ms"] == pytest.approx(statistics.mean(settled), rel=1e-9)
    # the simulator's seeds, from their CSVs (the scenario files are kept in the trials' folder)
    sim = []
    for seed in range(1, 21):
        rows = []
        with open(tmp / "trials" / ("convergence-2-0-seed%d.cfg.csv" % seed)) as fh:
            for r in csv.DictReader(fh):
                rows.append((float(r["time_us"]) / 1e6, int(r["flow"]), float(r["rate_gbps"])))
        link = 1.0 * 1082 / (1082 + 4 + 20)                   # the frame without FCS, as ccsim's packet
        conv = _held(_windowed(rows, 4, 0.005, 90), link / 4, 0.1, 0.1, 0.02)
        if conv is not None:
            sim.append(conv * 1e3)
    assert row["ccsim_seeds"] == 20 and row["ccsim_settled_seeds"] == len(sim)
    assert row["ccsim_models_the_path"]                       # one sender on leaf0, two uplinks
    assert row["ccsim_convergence_ms"] == pytest.approx(statistics.mean(sim), rel=1e-9)
    # the verdict says what the numbers say; none when most runs were the machine's, or when the
    # engine's mean is not known to the tolerance (95 %, Student's t over the settled runs)
    verdicts = [v for v in rep["verdicts"] if v["check"] == "convergence_as_ccsim"]
    t975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365}
    loose = len(settled) > 1 and 2 * len(settled) >= len(got) and t975[len(settled) - 1] * \
        statistics.stdev(settled) / math.sqrt(len(settled)) > 0.35 * row["ccsim_convergence_ms"]
    if row["machine_limited_runs"] > row["runs"] or 2 * row["runs"] < 8 or loose:
        assert not verdicts and row["machine_limited"]
    else:
        agree = 2 * len(settled) >= len(got) and 2 * len(sim) >= 20 and \
            abs(row["convergence_ms"] - row["ccsim_convergence_ms"]) <= 0.35 * row["ccsim_convergence_ms"]
        assert [v["verdict"] == "pass" for v in verdicts] == [agree]
    # DCQCN acted: CNPs, ECN marks at h7's leaf; the last window shares the link
    assert row["cnps"] > 0 and row["ecn_marked"] > 0
    assert 0.9 < row["last_window_jfi"] <= 1.0


def test_ecn_marking_follows_the_configured_ramp(ci):
    """§7.1: h7's port's depth bins from the engine's report, held here to the suite file's ramp
    (kmin 32 KB, kmax 128 KB, pmax 0.2): nothing marked at or below kmin, everything above kmax,
    a binomial share in between; every ECT frame that left the port is in a bin."""
    _, rep, tmp = ci
    e = results(rep, "ecn")
    assert e["section"] == "7.1" and e["priority"] == 3 and e["cc"] == "dcqcn"
    (row,) = e["rows"]
    assert row["ratio"] == 3 and row["ran"] and row["ramp"] == {"kmin_kb": 32, "kmax_kb": 128, "pmax": pytest.approx(0.2, abs=1e-4)}
    (er,) = trial_report(tmp, rep, "3:1 into h7 on class 3")
    (port,) = [p for s in er["fabric"]["switches"] for p in s["ports"] if p["port"] == "h7"]
    (d,) = [x for x in port["ecn_depth"] if x["tc"] == 3]
    w = d["bin_bytes"]
    assert w == 8192                                         # 32 bins over 0..2 kmax
    assert sum(d["frames"]) == port["tx_frames"] - sum(port["pfc_xoff_tx"]) - sum(port["pfc_xon_tx"])
    assert sum(d["marked"]) == port["ecn_marked"][3]
    kmin, kmax, pmax = 32768, 131072, 0.2
    judged, on_ramp = 0, 0
    for k, (n, m, q) in enumerate(zip(d["frames"], d["marked"], d["mean_depth_bytes"])):
        if n == 0:
            continue
        lo, hi = k * w, (k + 1) * w - 1 if k < 31 else math.inf
        assert lo <= q <= min(hi, 10 ** 9)
        if hi <= kmin:
            assert m == 0, (k, n, m)                         # RED never marks at or below kmin
        elif lo > kmax:
            assert m == n, (k, n, m)                         # and always above kmax
        elif lo >= kmin and hi <= kmax and n >= 50:          # on the ramp (a bin at kmax straddles it)
            p = pmax * (q - kmin) / (kmax - kmin)
            assert abs(m - n * p) <= 4 * math.sqrt(n * p * (1 - p)) + 1, (k, n, m, p)
            on_ramp += 1
        judged += n >= 50 and (hi <= kmin or lo > kmax or (lo >= kmin and hi <= kmax))
    assert on_ramp >= 3, d                                   # DCQCN keeps the queue on the ramp
    assert row["bins_off_the_ramp"] == 0
    # every switch's ports are judged: h7's bins are some of them
    assert row["bins_judged"] >= judged
    # the draft's real-switch method beside it: the CE share of what h7 received
    ce = sum(f["ecn_ce"] for f in er["flows"]) / sum(f["rx_packets"] for f in er["flows"])
    assert row["ce_ratio"] == pytest.approx(ce, rel=1e-9) and 0 < ce < 1
    (v,) = [v for v in rep["verdicts"] if v["check"] == "ecn_follows_the_ramp"]
    assert v["verdict"] == "pass"


def test_a_clos_routed_up_and_down_does_not_deadlock(ci):
    """§7.4 on the CI suite's leaf-spine: an all-to-all at 0.9 of every link on the lossless class,
    the fabric's deadlock detector on (10 ms): none, as up-down routing implies."""
    _, rep, tmp = ci
    d = results(rep, "deadlock")
    assert d["section"] == "7.4" and d["deadlock_ms"] == 10 and d["watchdog_detect_ms"] is None
    (row,) = d["rows"]
    (er,) = trial_report(tmp, rep, "all_to_all at 90 %")
    assert er["fabric"]["deadlock_ms"] == 10
    assert row["deadlocks"] == len(er["fabric"]["deadlocks"]) == 0 and row["protection"] == "immune"
    assert len(er["flows"]) == 8 * 7 and row["received_gbps"] > 0
    (v,) = [v for v in rep["verdicts"] if v["check"] == "deadlock_free_as_routed"]
    assert v["verdict"] == "pass"


RING_SUITE = ROOT / "configs" / "suites" / "ai-fabric-deadlock.cfg"


def test_the_ring_deadlocks_and_the_watchdog_breaks_each_deadlock(tmp_path):
    """§7.4 on the shipped ring: each deadlock broken within the watchdog's 20 ms (and the machine's
    longest hold-up); without the watchdog one deadlock lasts to the end, and a user threshold on
    the longest deadlock fails the suite."""
    p = run_suite(RING_SUITE, tmp_path, "-k", str(tmp_path / "trials"), "-q")
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    (row,) = results(rep, "deadlock")["rows"]
    (er,) = trial_report(tmp_path, rep, "shift at 90 %")
    found = er["fabric"]["deadlocks"]
    assert row["deadlocks"] == len(found) >= 2 and row["protection"] == "watchdog"
    held = max(l.get("longest_held_up_ms", 0) for l in er["lcores"]) / 1e3
    # each broken within the watchdog's time, or (the last) still young when the run ended
    assert all(x["duration_s"] <= 0.020 + 0.005 + held for x in found), (found, held)
    assert row["longest_deadlock_ms"] == pytest.approx(max(x["duration_s"] for x in found) * 1e3)
    storms = sum(sum(pt["watchdog"]["storms"]) for s in er["fabric"]["switches"] for pt in s["ports"])
    assert row["watchdog_storms"] == storms > 0 and row["watchdog_dropped"] > 0
    (v,) = [v for v in rep["verdicts"] if v["check"] == "deadlock_broken_by_the_watchdog"]
    assert v["verdict"] == "pass"
    assert not [v for v in rep["verdicts"] if v["check"] == "deadlock_free_as_routed"]   # a ring is no Clos

    text = RING_SUITE.read_text().replace(
        'headroom_kb = 128;\n          watchdog = { action = "drop"; detect_ms = 20; restore_ms = 50; }; };',
        'headroom_kb = 128; };') + "thresholds = { max_deadlock_ms = 100; };\n"
    assert "watchdog = {" not in text
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "ring.cfg").write_text(text)
    p = run_suite(bare / "ring.cfg", bare, "-q")
    assert p.returncode == 6, p.stdout + p.stderr                 # the threshold failed
    rep = json.loads((bare / "res" / "report.json").read_text())
    (row,) = results(rep, "deadlock")["rows"]
    assert row["protection"] == "none" and row["deadlock_at_end"] and row["stuck_share"] > 0.5
    assert any("lasted to the end" in a["what"] for a in rep["ai_fabric"]["sections"]["6_anomalies"])
    (t,) = rep["ai_fabric"]["thresholds"]
    assert t["kpi"] == "longest_deadlock_ms" and not t["pass"]


def storm_suite(tmp, watchdog):
    """The CI suite's fabric, §7.4 alone with a 300 ms PFC storm from 0.1 s; its switches' PFC with a
    30 ms watchdog or none."""
    text = CI_SUITE.read_text().replace("ai_fabric = {\n", 'ai_fabric = {\n  categories = ["deadlock"];\n', 1)
    text = text.replace('deadlock = { patterns = ["all_to_all"]; };',
                        'deadlock = { patterns = ["all_to_all"]; storm = { start_s = 0.1; duration_s = 0.3; }; };')
    if watchdog:
        text = text.replace("headroom_kb = 192; };", 'headroom_kb = 192;\n          watchdog = { action = "drop"; '
                            'detect_ms = 30; restore_ms = 50; }; };')
    assert "storm = {" in text and ("detect_ms = 30" in text) == watchdog
    cfg = tmp / "storm.cfg"
    cfg.write_text(text)
    p = run_suite(cfg, tmp, "-k", str(tmp / "trials"), "-q")
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp / "res" / "report.json").read_text())
    (er,) = trial_report(tmp, rep, "PFC storm from h1")
    return rep, results(rep, "deadlock")["storm"], er


# 64 KB of XOFF threshold filled by h0's QP toward h1 at 0.45 of 1 Gb/s of link, in frames of a
# 64 KiB WRITE (64 packets of 1,024 bytes with 62 bytes of headers each, its RETH; 20 bytes of
# preamble and gap each on the wire)
STORM_FILL_S = 64 * 1024 * 8 / (0.45 * 1e9 * (65536 + 64 * 62 + 16) / (65536 + 64 * 62 + 16 + 64 * 20))


def test_a_pfc_storm_spreads_and_the_watchdog_contains_it(tmp_path):
    """§7.4's storm on the virtual fabric: h1's NIC pauses its leaf port on class 3 for 300 ms while
    h0 writes to h1 and to h2. Without a watchdog the leaf pauses h0 (its frames for h1 fill its
    XOFF threshold) for the whole storm, and the victim h0 -> h2 waits with it; with a 30 ms
    watchdog on h1's port, h0 is let go within the detection time. Read by hand from the engine's
    report: h0's paused time, the XOFF it received, the watchdog's storms on leaf0's port to h1."""
    for watchdog in (False, True):
        tmp = tmp_path / ("wd" if watchdog else "bare")
        tmp.mkdir()
        rep, storm, er = storm_suite(tmp, watchdog)
        ports = {p["name"]: p for p in er["ports"]}
        assert (storm["sender"], storm["stormer"], storm["victim_receiver"]) == ("h0", "h1", "h2")
        assert storm["sender_paused_ms"] == pytest.approx(ports["h0"]["paused_ns"][3] / 1e6)
        assert storm["sender_xoff_rx"] == ports["h0"]["pfc_rx_xoff"][3] > 0
        assert storm["storm_frames"] == ports["h1"]["pfc_tx"][3] == 300          # 1,000 a second for 0.3 s
        assert storm["fill_ms"] == pytest.approx(STORM_FILL_S * 1e3, rel=1e-6)
        held = max(l.get("longest_held_up_ms", 0) for l in er["lcores"])
        checks = {v["check"]: v["verdict"] for v in rep["verdicts"]}
        leaf0 = {p["port"]: p for s in er["fabric"]["switches"] if s["name"] == "leaf0" for p in s["ports"]}
        # (a trial the machine limited is shown, not judged: its bounds are the CPU's too)
        judged = not storm.get("machine_limited")
        if watchdog:
            to_h1 = [p for name, p in leaf0.items() if name.endswith("h1")]
            assert len(to_h1) == 1 and to_h1[0]["watchdog"]["storms"][3] == 1 and to_h1[0]["watchdog"]["dropped"][3] > 0
            assert storm["watchdog_storms"] == 1 and storm["protection"] == "watchdog"
            assert "storm_spreads_without_a_watchdog" not in checks
            if judged:
                assert storm["sender_paused_ms"] <= STORM_FILL_S * 1e3 + 30 + 10 + held, (storm, held)
                assert checks["storm_contained_by_the_watchdog"] == "pass"
        else:
            assert storm["watchdog_storms"] is None and storm["protection"] == "none"
            assert storm["victim_received_gbps"] < 0.75 * storm["victim_offered_gbps"]   # held half the run
            assert any("no protection" in a["what"] for a in rep["ai_fabric"]["sections"]["6_anomalies"])
            if judged:
                assert storm["sender_paused_ms"] >= 300 - STORM_FILL_S * 1e3 - 10 - held, (storm, held)
                assert checks["storm_spreads_without_a_watchdog"] == "pass"
        assert judged or "storm_contained_by_the_watchdog" not in checks and "storm_spreads_without_a_watchdog" not in checks


def test_jct_from_the_phase_times_against_the_roofline(ci):
    """§10.1: 4 iterations of C then a ring AllReduce of 1 MiB over the 8 hosts. The JCT, each
    compute step and the roofline recomputed from the engine's phase times: 14 phases of 131,072-
    byte WRITEs per iteration; a 1 Gb/s link carries 131,072 payload bytes in 128 frames of
    1,024 + 62 bytes, one RETH, and 128 x 20 bytes of preamble and gap."""
    _, rep, tmp = ci
    j = results(rep, "jct")
    assert j["section"] == "10.1" and all(r["ranks"] == 8 and r["message_size"] == 1048576 for r in j["rows"])
    rows = {r["compute_ms"]: r for r in j["rows"]}
    assert sorted(rows) == [5, 20]
    payload = 1.0 * 131072 / (128 * (1024 + 62) + 16 + 128 * 20)
    ideal = 8 * 1048576 * 2 * 7 / 8 / (payload * 1e9)            # ring AllReduce: 2(N-1)/N x S
    for c_ms, r in rows.items():
        assert r["iterations_completed"] == 4 and r["payload_gbps"] == pytest.approx(payload, rel=1e-9)
        (er,) = trial_report(tmp, rep, "allreduce of 1048576 bytes over 8 hosts, 4 iterations after compute")[
            [5, 20].index(c_ms):][:1]
        (c,) = er["collectives"]
        assert c["compute_us"] == c_ms * 1000 and c["iteration_phases"] == 14 and c["phases_completed"] == 56
        starts, ends = c["phase_start_us"], c["phase_end_us"]
        assert starts[0] == pytest.approx(c_ms * 1000, abs=1)
        for k in range(14, 56, 14):                                 # each iteration computes first
            assert starts[k] == pytest.approx(ends[k - 1] + c_ms * 1000, abs=1e-3)
        assert r["jct_s"] == pytest.approx(ends[-1] / 1e6, rel=1e-9)
        roof = 4 * (c_ms / 1e3 + ideal)
        assert r["roofline_s"] == pytest.approx(roof, rel=1e-9)
        assert r["jct_ratio"] == pytest.approx(r["jct_s"] / roof, rel=1e-9) and r["jct_ratio"] >= 0.999
        comm = [(ends[(i + 1) * 14 - 1] - (ends[i * 14 - 1] if i else 0)) / 1e3 - c_ms for i in range(4)]
        assert r["comm_mean_ms"] == pytest.approx(statistics.mean(comm), rel=1e-6)
        assert r["overlap_fraction"] == pytest.approx(0, abs=1e-9)   # in sequence: nothing hidden
        assert r["reading"] == ("excellent" if r["jct_ratio"] <= 1.05 else
                                "moderate overhead" if r["jct_ratio"] < 1.15 else "significant overhead")
    for check in ("jct_completes", "jct_at_least_roofline", "jct_compute_kept"):
        assert [v["verdict"] for v in rep["verdicts"] if v["check"] == check] == ["pass", "pass"], check


def _leaf_tier_bytes(er):
    """Bytes on each direction of the leaf-spine links of an engine report: {(from, to): bytes}."""
    out = {}
    for link in er["fabric"]["links"]:
        if link["tier"] == "leaf":
            for d in ("a_to_b", "b_to_a"):
                out[(link[d]["from"], link[d]["to"])] = link[d]["bytes"]
    return out


def _jct(er, name):
    (c,) = [c for c in er["collectives"] if c["name"] == name]
    return c["phase_end_us"][-1] / 1e6, len(c["phase_end_us"])


def test_interference_two_jobs_sharing_spine_links(ci):
    """§10.3 on the CI fabric: job A on h0, h4, h1, h5 and job B on h2, h6, h3, h7 (rings that
    cross the spines at every edge), A's four edges on spine0; B's on spine1, or 3 of its 4 on
    spine0. The overlap recomputed from the lab's own link counters (the share of B's bytes, alone,
    on the links A used alone); the factors from the jobs' phase times. By hand, max-min: alone
    each job's slowest edge shares a 1 Gb/s uplink with one more (0.5 Gb/s); at 75 % two of B's
    join A's two at leaf0's uplink to spine0 (0.25 Gb/s each): a factor of 2 for both jobs."""
    _, rep, tmp = ci
    itf = results(rep, "interference")
    assert itf["section"] == "10.3" and itf["ranks_per_job"] == 4
    (a_alone,) = trial_report(tmp, rep, "job A alone")
    on_a = {d for d, b in _leaf_tier_bytes(a_alone).items() if b > 1e6}
    assert {x for d in on_a for x in d} == {"leaf0", "leaf1", "spine0"}          # A: spine0 only
    for row, plan in zip(itf["rows"], (1.0, 2.0)):
        want = row["overlap_wanted"]
        assert row["overlap"] == want
        tag = "overlap %d %%" % round(100 * want)
        (b_alone,) = trial_report(tmp, rep, "job B alone, " + tag)
        (both,) = trial_report(tmp, rep, "both jobs, " + tag)
        b_bytes = _leaf_tier_bytes(b_alone)
        shared = sum(b for d, b in b_bytes.items() if d in on_a) / sum(b_bytes.values())
        assert shared == pytest.approx(want, abs=0.03)                          # ACKs take their own paths
        for j, name in enumerate(("ja", "jb")):
            alone_s, phases = _jct(a_alone if j == 0 else b_alone, name)
            both_s, phases_both = _jct(both, name)
            assert phases == phases_both == 12 * 6                              # 12 iterations of 2(4-1)
            f = both_s / alone_s
            key = "ab"[j]
            assert row["interference_factor_" + key] == pytest.approx(f, rel=1e-9)
            assert row["plan_factor_" + key] == pytest.approx(plan, rel=1e-9)
            if not row.get("machine_limited"):
                assert 0.7 * plan <= f <= 1.1 * plan, (want, name, f)
    checks = [v for v in rep["verdicts"] if v["check"].startswith("interference_")]
    assert checks and all(v["verdict"] == "pass" for v in checks)
    assert sum(v["check"] == "interference_jobs_complete" for v in checks) == 4


def _nearest_rank(xs, q):
    xs = sorted(xs)
    return xs[max(math.ceil(q * len(xs)), 1) - 1]


def test_link_failure_recomputed_from_the_events_and_phase_times(ci):
    """§11.2 on the CI fabric: 12 ring AllReduce iterations steady, then twice with the busiest
    leaf-spine link, then its spine's two links, down in the middle of iteration 6. Recomputed
    from the engine's reports: the link is the steady run's busiest, the frames lost are the
    switches' link_down drops, the loss window ends before the routes converge (50 ms), the
    failure iteration is the one running at the event and its extra time is over the steady
    median (nearest rank); zero impact: within the steady p99."""
    _, rep, tmp = ci
    lf = results(rep, "link_failure")
    assert lf["section"] == "11.2" and lf["ranks"] == 8 and lf["fail_iteration"] == 6
    label = "allreduce of 1048576 bytes over 8 hosts, 12 iterations"
    by_label = {t["label"]: json.loads(Path(t["report"]).read_text()) for t in rep["trials"]
                if t["label"].startswith(label) and t.get("report")}

    def iterations(er):
        (c,) = er["collectives"]
        ends = [0.0] + [c["phase_end_us"][k] / 1e6 for k in range(13, len(c["phase_end_us"]), 14)]
        return [b - a for a, b in zip(ends, ends[1:])], ends[1:]

    steady = by_label[label]
    st_iter, st_ends = iterations(steady)
    assert len(st_iter) == 12
    med, p99 = _nearest_rank(st_iter, 0.5), _nearest_rank(st_iter, 0.99)
    assert lf["steady_median_ms"] == pytest.approx(med * 1e3, rel=1e-9)
    busiest = max((l for l in steady["fabric"]["links"] if l["tier"] == "leaf"),
                  key=lambda l: l["a_to_b"]["bytes"] + l["b_to_a"]["bytes"])
    spine = busiest["b"] if busiest["b"].startswith("spine") else busiest["a"]
    rows = {r["failure"]: r for r in lf["rows"]}
    assert sorted(rows) == ["leaf_uplink", "spine"]
    assert rows["leaf_uplink"]["links"] == [busiest["name"]]
    assert sorted(rows["spine"]["links"]) == sorted(l["name"] for l in steady["fabric"]["links"]
                                                     if spine in (l["a"], l["b"]))
    for kind, r in rows.items():
        assert r["at_s"] == pytest.approx(sum(st_iter[:6]) + med / 2, rel=1e-9)
        er = by_label[label + ", down: " + r["what"]]
        ev = er["fabric"]["events"]
        assert [e["link"] for e in ev] == r["links"] and all(e["applied"] for e in ev)
        lost = sum(e["frames_lost"] for e in ev)
        drops = sum(l[d]["drops"]["link_down"] + l[d]["drops"]["no_route"]
                    for l in er["fabric"]["links"] for d in ("a_to_b", "b_to_a") if l[d].get("drops"))
        assert r["frames_lost"] == lost == drops and lost > 0
        applied = min(e["applied_s"] for e in ev)
        converged = max(e["converged_s"] for e in ev)
        assert r["reroute_ms"] == pytest.approx((converged - applied) * 1e3, rel=1e-6)
        assert 50 <= r["reroute_ms"]                                            # 50 ms after each event
        if not r.get("machine_limited"):    # a busy lab lcore takes its events late (seen: 54 ms)
            assert r["reroute_ms"] <= 50 + 1.5 * len(ev)
        assert r["loss_duration_ms"] <= r["reroute_ms"] + 2
        it, ends = iterations(er)
        assert len(it) == 12
        k = next(i for i, e in enumerate(ends) if e > applied)
        assert r["failure_iteration"] == k and k in (5, 6, 7)
        assert r["extra_ms"] == pytest.approx((it[k] - med) * 1e3, rel=1e-6)
        assert r["zero_impact"] == (it[k] <= p99)
        assert r["jct_extra_ms"] == pytest.approx((ends[-1] - st_ends[-1]) * 1e3, rel=1e-6)
    checks = [v for v in rep["verdicts"] if v["check"].startswith("link_failure_")]
    assert [v["check"] for v in checks].count("link_failure_completes") == 2
    assert all(v["verdict"] == "pass" for v in checks)


def test_soak_samples_recomputed_from_the_time_series(ci):
    """§12 on the CI fabric: 6 s of a ring AllReduce and an AlltoAll of 1 MiB over the 8 hosts in
    turns of 0.5 s (the engine's repeating collectives and their windows), sampled by its time
    series. Recomputed from the CSV: each sample's op (the most iterations) alternating, its busBW
    (S x 2(N-1)/N or (N-1)/N over the mean iteration time), at most a link's payload rate; the
    iterations adding up to the engine's counts; the resident memory's least-squares slope after
    the warm-up (half of so short a run)."""
    _, rep, tmp = ci
    sk = results(rep, "soak")
    assert sk["section"] == "12" and sk["ranks"] == 8
    (t,) = [t for t in rep["trials"] if t["label"].startswith("soak:")]
    er = json.loads(Path(t["report"]).read_text())
    rows = list(csv.DictReader(open(Path(t["report"]).parent / "ts.csv")))
    times = sorted({float(r["time_s"]) for r in rows})
    assert sk["sample_count"] == len(sk["samples"]) == len(times) and len(times) >= 11
    coll = {c["name"]: c for c in er["collectives"]}
    assert all(c["repeat"] for c in coll.values())
    per = collections.defaultdict(dict)
    for r in rows:
        if r["kind"] == "collective":
            per[float(r["time_s"])][r["name"]] = (int(r["iterations"]), float(r["iteration_ms"] or 0))
        if r["kind"] == "process":
            per[float(r["time_s"])]["rss"] = float(r["rss_mb"])
    for name in ("allreduce", "alltoall"):
        assert sum(per[t][name][0] for t in times) == coll[name]["iterations_completed"]
    payload = 1.0 * 131072 / (128 * (1024 + 62) + 16 + 128 * 20)     # Gb/s of a 1 Gb/s link, 128 KiB messages
    factor = {"allreduce": 2 * 7 / 8, "alltoall": 7 / 8}
    for i, (t, s) in enumerate(zip(times, sk["samples"])):
        op = max(("allreduce", "alltoall"), key=lambda n: per[t][n][0])
        assert s["op"] == op and s["t_s"] == pytest.approx(t)
        if i + 1 < len(times):
            assert op == ("allreduce", "alltoall")[i % 2], (i, t)                # the turns
        n_it, ms = per[t][op]
        bw = 1048576 * factor[op] * 8 / (ms / 1e3) / 1e9
        assert s["busbw_gbps"] == pytest.approx(bw, rel=1e-3) and bw <= payload * 1.001
    t_end = times[-1]
    warm = min(max(0.1 * t_end, 30), t_end / 2)
    xs = [t for t in times if t >= warm]
    ys = [per[t]["rss"] for t in xs]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs) * 3600
    assert sk["memory_slope_mb_per_h"] == pytest.approx(slope, rel=1e-3, abs=1e-3)
    assert sk["stalls"] == 0 and sk["counter_wraps"] == 0 and not sk["leak"]
    checks = [v for v in rep["verdicts"] if v["check"].startswith("soak_")]
    assert sorted(v["check"] for v in checks) == ["soak_counters_monotonic", "soak_memory_flat", "soak_no_stall"]
    assert all(v["verdict"] == "pass" for v in checks)

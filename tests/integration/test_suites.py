"""roce-suite (docs/suites.md): validation suites run as roce-engine trials against the virtual
lab's switch, a device whose capacity is known from its settings.

* rfc2544: the throughput search finds the bottleneck link's frame capacity, 1 Gb/s x F / (F + 20)
  (lab/switch.c paces every frame with 24 bytes besides its bytes without FCS), within a few %;
  the loss curve loses about the overload at the top and nothing at its last two steps.
* rfc2544 on a base config: the trial configs are the base with the measured flows changed.
* microburst: the largest burst without loss follows the queue limit (a bigger limit, a bigger
  burst), and the largest without a CE mark follows kmin.
* hol: PFC on the congested priority holds the shared ingress, and the victim of the same
  priority loses goodput while the other priority's does not; without PFC neither does.
* incast: per N, the per-sender goodputs add up to the aggregate, rounds complete.
* collective: the per-phase table is the engine report's numbers.
* errors: bad suite configs give FILE:LINE: SETTING: messages (exit 3); a trial that hangs or
  crashes is killed and reported (exit 4), and the suite still ends.

    ROCE_SUITE (default build/apps/roce-suite) runs ROCE_ENGINE (default build/apps/roce-engine).
Rates are measured on a shared machine: tolerances are wide and links slow (1 Gb/s).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import engine_path

# roce-suite drives engine trials on the same paths the lab tests cover on both builds: CI runs
# the suites on the release build only (time)
pytestmark = pytest.mark.release_only

ROOT = Path(__file__).resolve().parents[2]
ASAN = "asan" in str(engine_path())
DURATION = 0.3 if ASAN else 0.5          # seconds of traffic per rate trial


def suite_path():
    return Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite")).resolve()


@pytest.fixture
def suite(tmp_path):
    if not suite_path().exists():
        pytest.fail("roce-suite not found at %s (build it, or set $ROCE_SUITE)" % suite_path())
    if not engine_path().exists():
        pytest.fail("roce-engine not found at %s" % engine_path())

    def run(text, *args, name="suite.cfg", timeout=240):
        cfg = tmp_path / name
        cfg.write_text(text)
        rep = tmp_path / (name + ".json")
        env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()))
        r = subprocess.run([str(suite_path()), str(cfg), "-r", str(rep)] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=timeout, cwd=str(tmp_path), env=env)
        data = json.loads(rep.read_text()) if rep.exists() else None
        return r.returncode, data, r.stdout + r.stderr

    return run


def frame_capacity_gbps(link_gbps, frame):
    return link_gbps * frame / (frame + 20)


def busy(share_pct, what):
    """The lab's links are emulated by an lcore: on a machine so busy that the lcore does not get
    its CPU, the device under test itself is slower, and a rate measurement says nothing about
    the suite. The suite reports it (rfc2544's `carried %`); the rate checks are then skipped."""
    if share_pct < 90:
        pytest.skip("the machine is too busy for rate measurements: " + what)


def judged(rc, rep, out):
    """A suite whose verdicts all passed exits 0. On a machine so busy that the lab's links fall
    behind, a verdict may fail on results the suite flagged as the machine's (exit 6, `! busy
    machine` lines): the verdicts say nothing about the suite then; the test's other checks go on
    (its rate checks skip themselves on such a machine, busy())."""
    assert rep is not None, out
    if rc == 6 and rep["machine_limited"]:
        print("verdicts failed on results flagged as the machine's: %s" % rep["verdicts"])
        return
    assert rc == 0, out
    assert rep["verdicts"] and rep["verdicts_failed"] == 0 and rep["exit_status"] == 0, rep["verdicts"]


def check_trial_records(rep):
    for t in rep["trials"]:
        assert {"id", "label", "kind", "params", "status", "verdict", "wall_s"} <= set(t), t
        if t["status"] == "ok":
            assert {"sent", "received", "lost", "loss_pct", "latency_ns", "queued_at_end"} <= set(t), t
            assert t["sent"] >= t["received"], t


def test_rfc2544_finds_the_link_capacity(suite):
    rc, rep, out = suite("""
suite = { name = "t2544"; type = "rfc2544"; };
lab = { link_gbps = 1.0; };
switch = { buffer_kb = 1024; };
trial = { duration_s = %g; retries = 2; };
rfc2544 = { frame_sizes = [1024]; min_gbps = 0.7; max_gbps = 1.1; resolution_pct = 3.0;
            latency_fractions = [0.5]; loss_step_pct = 15.0; };
""" % DURATION)
    judged(rc, rep, out)
    assert "RFC 2544 throughput" in out and "frame loss rate" in out
    r = rep["rfc2544"]
    expected = frame_capacity_gbps(1.0, 1024)
    (tp,) = r["throughput"]
    assert abs(tp["expected_gbps"] - expected) < 1e-9
    assert abs(tp["throughput_fps"] - tp["throughput_gbps"] * 1e9 / (1024 * 8)) < 1
    check_trial_records(rep)
    busy(tp["carried_pct"], "the bottleneck carried %.0f %% of its link when overloaded" % tp["carried_pct"])
    # within the search's resolution (3 % of 1.1 Gb/s) and what the 8 ms buffer absorbs of an
    # overload over one trial, above; scheduling gaps of a shared CPU, below
    assert 0.85 * expected <= tp["throughput_gbps"] <= 1.05 * expected, (tp, out)
    (lat,) = r["latency"]
    assert lat["fraction"] == 0.5 and lat["latency_ns"]["p50"] > 0
    assert lat["latency_ns"]["p50"] <= lat["latency_ns"]["p99"] <= lat["latency_ns"]["max"]
    curve = r["loss_curve"]
    assert curve[0]["pct_of_max"] == 100 and curve[0]["offered_gbps"] == pytest.approx(1.1)
    # 1.1 Gb/s offered into ~0.98: about 11 % lost, unless the step's own machine check says the
    # lab's lcore fell behind (then it lost what the CPU took, and says so)
    assert all(isinstance(row["carried_pct"], float) for row in curve)
    assert curve[0]["loss_pct"] > 4 and (curve[0]["loss_pct"] < 20 or curve[0]["machine_limited"]), curve
    # RFC 2544 26.3: down in steps until two steps in a row lose nothing
    assert len(curve) >= 3 and curve[-1]["lost"] == 0 and curve[-2]["lost"] == 0, curve
    for row in curve:
        if row["offered_gbps"] < 0.9 * expected:
            assert row["loss_pct"] < 2, curve   # below the capacity: nothing, but for a scheduling gap
    check_trial_records(rep)
    search = [t for t in rep["trials"] if t["kind"] == "search"]
    assert search and all(t["verdict"] in ("pass", "fail") for t in search)
    assert all(t["params"]["frame_size"] == 1024 for t in rep["trials"])


def test_rfc2544_on_a_base_config(suite, tmp_path):
    base = tmp_path / "base.cfg"
    base.write_text("""
eal = { lcores = "0-1"; memory_mb = 256; };
ports = (
  { name = "a"; device = "ring:bx:a"; mac = "02:00:00:00:00:01"; ipv4 = "10.0.0.1"; link_speed_gbps = 2.0; },
  { name = "b"; device = "ring:bx:b"; mac = "02:00:00:00:00:02"; ipv4 = "10.0.0.2"; link_speed_gbps = 2.0; }
);
lcores = ( { lcore = 1; port = "a"; role = "txrx"; }, { lcore = 1; port = "b"; role = "txrx"; } );
flows = (
  { name = "m"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; transport = "uc";
    ops = { write = 1; }; message_size = 65536; mtu = 1024; qpn = 0x100; dest_qpn = 0x200; count = 2;
    pattern = "poisson"; rate_gbps = 0.1; },
  { name = "bg"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; transport = "ud";
    message_size = 256; qpn = 0x300; dest_qpn = 0x400; rate_gbps = 0.05; }
);
""")
    keep = tmp_path / "trials"
    rc, rep, out = suite("""
suite = { name = "base"; type = "rfc2544"; base = "base.cfg"; };
trial = { duration_s = 0.2; };
rfc2544 = { frame_sizes = [512]; max_gbps = 0.5; max_trials = 1; latency_fractions = []; loss_step_pct = 100.0;
            flows = ["m"]; };
""", "-k", keep, "--measure-only")    # the trial configs, not the verdicts (senders short on a busy machine)
    assert rc == 0, out
    assert [t["kind"] for t in rep["trials"]] == ["search", "loss"]
    t = rep["trials"][0]
    assert t["status"] == "ok" and t["lost"] == 0 and t["sent"] > 0
    assert t["config"] == str(keep / "t001" / "trial.cfg")
    cfg = (keep / "t001" / "trial.cfg").read_text()
    # the measured group: one 512-byte frame per message (450 bytes of UC payload), the offered
    # rate split over its 2 QPs, constant pacing, one-way probes; the background flow unchanged
    m = cfg[cfg.index('name = "m"'):cfg.index('name = "bg"')]
    assert "message_size = 450;" in m and "rate_gbps = 0.25;" in m and "send = 1;" in m
    assert "pattern" not in m and "write" not in m and 'mode = "oneway"' in m
    bg = cfg[cfg.index('name = "bg"'):]
    assert "message_size = 256;" in bg and "rate_gbps = 0.05;" in bg
    prefixes = [(keep / d / "trial.cfg").read_text().split("file_prefix = ")[1].split(";")[0] for d in ("t001", "t002")]
    assert prefixes[0] != prefixes[1]
    report = json.loads((keep / "t001" / "report.json").read_text())
    assert sum(f["tx_packets"] for f in report["flows"] if f["group"] == "m") == t["sent"]


def _microburst(suite, queue_kb, search, name):
    rc, rep, out = suite("""
suite = { name = "mb"; type = "microburst"; };
lab = { link_gbps = 1.0; senders = 2; };
switch = { buffer_kb = 512; queue_limit_kb = %d; ecn = ( { tc = 3; kmin_kb = 16; kmax_kb = 16; } ); };
trial = { duration_s = 2.0; };
microburst = { frame_size = 1024; min_burst = 16; max_burst = 80; resolution = 8; search = %s; };
""" % (queue_kb, search), name=name)
    judged(rc, rep, out)
    check_trial_records(rep)
    return {r["search"]: r for r in rep["microburst"]["results"]}


def test_microburst_follows_the_queue_limit(suite):
    small = _microburst(suite, 32, '["loss", "ecn"]', "small.cfg")
    large = _microburst(suite, 64, '["loss"]', "large.cfg")
    for res, kb in ((small, 32), (large, 64)):
        loss = res["loss"]
        # 2 x kb KB of 1,020-byte frames (the switch counts no FCS); what drains meanwhile is small
        assert loss["expected_frames"] == kb * 1024 // 1020
        assert not loss["beyond_max"] and not loss["below_min"], loss
        assert loss["expected_frames"] - 8 <= loss["burst_frames"] <= loss["expected_frames"] + 10, loss
        assert loss["max_queue_bytes"] <= kb * 1024
    assert large["loss"]["burst_frames"] > small["loss"]["burst_frames"]
    ecn = small["ecn"]
    assert ecn["expected_frames"] == 16 * 1024 // 1020 + 1
    assert abs(ecn["burst_frames"] - ecn["expected_frames"]) <= 8 + 2, ecn


def test_hol_blocking_under_pfc_only(suite):
    rc, rep, out = suite("""
suite = { name = "hol"; type = "hol"; };
lab = { link_gbps = 1.0; };
switch = { buffer_kb = 1024; queue_limit_kb = 256; pfc = { priorities = [3]; xoff_kb = 64; xon_kb = 48; headroom_kb = 256; }; };
trial = { duration_s = %g; };
hol = { frame_size = 1024; victim_priorities = [3, 1]; pfc = [true, false]; };
""" % DURATION)
    judged(rc, rep, out)
    assert "head-of-line blocking" in out
    rows = {(r["pfc"], r["priority"]): r for r in rep["hol"]["classes"]}
    assert set(rows) == {(True, 3), (True, 1), (False, 3), (False, 1)}
    check_trial_records(rep)
    for r in rows.values():   # without congestion each victim gets what it offers, on an idle enough CPU
        busy(100 * r["baseline_gbps"] / r["offered_goodput_gbps"], "a victim's baseline goodput was %.3f of %.3f Gb/s"
             % (r["baseline_gbps"], r["offered_goodput_gbps"]))
    # PFC pauses h0's priority 3: the victim on it waits behind the congestor's paused frames
    assert rows[(True, 3)]["degradation_pct"] > 20, rows
    assert rows[(True, 3)]["verdict"] == "hol_blocking" and rows[(True, 3)]["paused_ms"] > 0
    # another priority, or no PFC: no head-of-line blocking
    for key in ((True, 1), (False, 3), (False, 1)):
        assert rows[key]["degradation_pct"] < 10, rows
    cases = {c["pfc"]: c for c in rep["hol"]["cases"]}
    assert cases[True]["xoff_tx"] > 0 and cases[True]["congestor_lost"] == 0
    assert cases[False]["xoff_tx"] == 0 and cases[False]["switch_dropped"] > 0


def test_incast_tables_add_up(suite):
    rc, rep, out = suite("""
suite = { name = "incast"; type = "incast"; };
lab = { link_gbps = 1.0; };
switch = { buffer_kb = 1024; pfc = { priorities = [3]; xoff_kb = 64; xon_kb = 48; headroom_kb = 256; };
           ecn = ( { tc = 3; kmin_kb = 32; kmax_kb = 128; pmax = 0.2; } ); };
trial = { duration_s = %g; };
incast = { senders = [2, 4]; transfer_kb = 64; rounds = 2; };
""" % DURATION)
    judged(rc, rep, out)
    inc = rep["incast"]
    payload_capacity = 1.0 * 1024 / (1024 + 62 + 20)
    assert [r["senders"] for r in inc["results"]] == [2, 4]
    for r in inc["results"]:
        n = r["senders"]
        per = r["per_sender_goodput_gbps"]
        assert len(per) == n and sum(per) == pytest.approx(r["aggregate_goodput_gbps"], rel=1e-6)
        assert r["jain_index"] == pytest.approx(sum(per) ** 2 / (n * sum(x * x for x in per)), rel=1e-9)
        # at most the port (plus what drained after the senders stopped); at least a fair part of
        # it, unless the machine is so busy that the lab's lcore falls behind
        assert 0.2 * payload_capacity < r["aggregate_goodput_gbps"] <= 1.05 * payload_capacity, r
        assert r["jain_index"] > 0.7, r
        assert r["lost"] == 0 and r["xoff_tx"] > 0, r              # PFC: paused, not dropped
        assert r["rounds_completed"] == 2, r
        ideal_us = n * 64 * 1024 * 8 / (payload_capacity * 1e3)   # the bytes of a round at the port's rate
        assert r["completion_mean_us"] > 0.9 * ideal_us, r
        assert r["completion_min_us"] <= r["completion_p50_us"] <= r["completion_max_us"]
    # Twice the senders, twice the bytes through one port: the bound above gives the 4-sender
    # round at least 1.8 x the 2-sender round's ideal. Not "longer than the 2-sender round as
    # measured": a host that takes the lab's CPU for a few sub-millisecond slices (uncounted in
    # held_up_ms) during a 3 ms trial stretches that round, as it did beside stress-ng (2,950 us
    # against an ideal of 1,133).


def test_collective_table_is_the_engine_report(suite, tmp_path):
    keep = tmp_path / "trials"
    rc, rep, out = suite("""
suite = { name = "ring"; type = "collective"; base = "%s"; };
""" % (ROOT / "configs" / "ring-allreduce-4.cfg"), "-k", keep)
    assert rc == 0, out
    (table,) = rep["collective"]["collectives"]
    engine = json.loads((keep / "t001" / "report.json").read_text())
    (coll,) = engine["collectives"]
    assert table["name"] == coll["name"] == "allreduce" and table["phases_completed"] == coll["phases_completed"] == 6
    for k, row in enumerate(table["per_phase"]):
        assert row["phase"] == k
        assert row["start_us"] == pytest.approx(coll["phase_start_us"][k], rel=1e-9)
        assert row["end_us"] == pytest.approx(coll["phase_end_us"][k], rel=1e-9)
        assert row["completion_us"] == pytest.approx(coll["phase_completion_us"][k], rel=1e-9)
        # 4 QPs x 256 KiB per phase
        assert row["algbw_gbps"] == pytest.approx(4 * 262144 * 8 / row["completion_us"] / 1e3, rel=1e-9)
    times = coll["phase_completion_us"]
    s = table["summary"]
    assert s["min_us"] == pytest.approx(min(times)) and s["max_us"] == pytest.approx(max(times))
    assert s["mean_us"] == pytest.approx(sum(times) / len(times))
    assert table["total_us"] == pytest.approx(coll["total_us"]) and table["bytes_per_phase"] == 4 * 262144
    assert "collective allreduce (ring)" in out and "completion us: min" in out


BAD = [
    ('suite = { name = "x"; type = "rfc2545"; };\n',
     "suite.cfg:1: suite.type: unknown value 'rfc2545' (allowed: rfc2544, microburst, hol, incast, collective, ai_fabric)"),
    ('suite = { name = "x"; type = "rfc2544"; };\nrfc2544 = {\n  frame_sizes = [1024, 20];\n};\n',
     "suite.cfg:3: rfc2544.frame_sizes.[1]: 20 is out of range (64..4158)"),
    ('suite = { name = "x"; type = "hol"; };\nincast = { senders = [2]; };\n',
     "suite.cfg:2: incast: not with suite.type hol"),
    ('suite = { name = "x"; type = "incast"; };\ntrial = {\n  duraton_s = 1.0;\n};\n',
     "suite.cfg:3: trial.duraton_s: unknown setting 'duraton_s' (allowed: duration_s, timeout_s, retries)"),
    ('suite = { name = "x"; type = "collective"; };\n',
     "suite.cfg:1: suite.base: missing (required for type collective"),
    ('suite = { name = "x"; type = "rfc2544"; base = "nothere.cfg"; };\n',
     "suite.cfg:1: suite.base: cannot read"),
    ('suite = { name = "x"; type = "rfc2544"; };\nrfc2544 = {\n  min_gbps = 2.0;\n  max_gbps = 1.0;\n};\n',
     "suite.cfg:3: rfc2544.min_gbps: 2 is not below max_gbps 1"),
    ('suite = { name = "x"; type = "incast"; };\nincast = { senders = [2, 9]; };\n',
     "suite.cfg:2: incast.senders.[1]: 9 is out of range (1..7)"),
    ('suite = { name = "x"; type = "hol"; };\nhol = {\n  victim_priorities = [1, 1];\n};\n',
     "suite.cfg:3: hol.victim_priorities: has a priority twice"),
    ('suite = { name = "x" ; type = "microburst"; }\nmicroburst = { search = ["loss", "drops"]; };\n',
     "suite.cfg:2: microburst.search.[1]: unknown value 'drops' (allowed: loss, ecn, pfc)"),
    ('suite = { name = "x"; type = "microburst"; };\nmicroburst = { min_burst = 1; };\n',
     "suite.cfg:2: microburst.min_burst: 1 is below lab.senders 2"),
    ('suite = { name = "x"; type = "rfc2544"; };\nrfc2544 = { flows = ["a"]; };\n',
     "suite.cfg:2: rfc2544.flows: only with suite.base"),
    ('suite = { name = "x"; type = "incast";\n  measure_only = 1; };\n',
     "suite.cfg:2: suite.measure_only: must be true or false, not an integer"),
    ('suite = { name = "x"; type = "rfc2544" };\nlab = { link_gbps = 1.0; host_gbps = 1.0; };\n',
     "suite.cfg:1: rfc2544.max_gbps: 1.1 is above lab.host_gbps 1"),
    # the engine refuses the switch group: pointed back at the suite file's own line
    ('suite = { name = "x"; type = "microburst"; };\nswitch = {\n  buffer_kb = 64;\n  queue_limit_kb = 128;\n};\n',
     "suite.cfg:4: switch.queue_limit_kb: 128 is above buffer_kb 64"),
]


@pytest.mark.parametrize("text,msg", BAD, ids=[m.split(": ")[1] for _, m in BAD])
def test_bad_suite_configs(suite, text, msg):
    rc, rep, out = suite(text, "-q")
    assert rc == 3, out
    assert msg in out, out


def test_bad_base_config_is_the_engines_message(suite, tmp_path):
    (tmp_path / "b.cfg").write_text('ports = (\n  { name = "a"; devcie = "ring:x:a"; }\n);\n')
    rc, rep, out = suite('suite = { name = "x"; type = "collective"; base = "b.cfg"; };\n', "-q")
    assert rc == 3 and rep is None
    assert "b.cfg:2: ports.[0].devcie: unknown setting 'devcie'" in out, out


def test_usage_and_check(suite, tmp_path):
    r = subprocess.run([str(suite_path())], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: roce-suite" in r.stderr
    r = subprocess.run([str(suite_path()), "-d", "x", "s.cfg"], capture_output=True, text=True)
    assert r.returncode == 2
    for cfg in sorted((ROOT / "configs" / "suites").glob("*.cfg")):
        r = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True,
                           env=dict(os.environ, ROCE_ENGINE=str(engine_path().resolve())))
        assert r.returncode == 0 and "is valid" in r.stdout, (cfg, r.stdout + r.stderr)


def _fake_engine(tmp_path, body):
    p = tmp_path / "fake-engine.sh"
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return p


def test_a_hanging_trial_is_killed_and_the_suite_ends(suite, tmp_path):
    fake = _fake_engine(tmp_path, "exec sleep 37.25")
    t0 = time.monotonic()
    rc, rep, out = suite("""
suite = { name = "hang"; type = "incast"; };
trial = { duration_s = 0.2; timeout_s = 1.0; };
incast = { senders = [2, 3]; transfer_kb = 0; };
""", "-e", fake)
    assert time.monotonic() - t0 < 15
    assert rc == 4, out
    assert [t["status"] for t in rep["trials"]] == ["timeout", "timeout"]
    assert all(t["verdict"] == "error" and "killed" in t["error"] for t in rep["trials"])
    assert rep["trial_errors"] == 2 and rep["exit_status"] == 4
    assert "timeout" in out and "(a trial failed)" in out
    left = subprocess.run(["pgrep", "-f", "sleep 37.25"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the hung trial's process is still there"


def test_a_crashing_trial_is_reported(suite, tmp_path):
    fake = _fake_engine(tmp_path, 'echo "about to fail" >&2; kill -SEGV $$')
    rc, rep, out = suite("""
suite = { name = "crash"; type = "incast"; };
trial = { duration_s = 0.2; };
incast = { senders = [2]; transfer_kb = 0; };
""", "-e", fake)
    assert rc == 4, out
    (t,) = rep["trials"]
    assert t["status"] == "crashed" and "signal 11" in t["error"] and "about to fail" in t["error"]


# ---- verdicts and the exit status -------------------------------------------------------------------

OVERLOADED = """
suite = { name = "over"; type = "rfc2544"; %s};
lab = { link_gbps = 1.0; };
switch = { buffer_kb = 64; };
trial = { duration_s = 0.3; };
rfc2544 = { frame_sizes = [1024]; min_gbps = 1.05; max_gbps = 1.1; max_trials = 1; latency_fractions = [];
            loss_step_pct = 100.0; };
"""


def test_a_failing_verdict_exits_6_unless_the_suite_only_measures(suite):
    """Even min_gbps overloads the 1 Gb/s link (64 KB of buffer): no rate passes, the throughput
    verdict fails. The exit status says so (6, as the engine's failed SLA); measuring only keeps the
    verdict in the report and exits 0."""
    rc, rep, out = suite(OVERLOADED % "", "-q")
    assert rc == 6, out
    assert rep["exit_status"] == 6 and rep["verdicts_failed"] == 1 and rep["measure_only"] is False
    (v,) = rep["verdicts"]
    assert v["check"] == "throughput" and v["verdict"] == "fail" and v["what"].startswith("1024 B:"), v
    assert "  FAIL  throughput: 1024 B: frame loss above the threshold even at min_gbps 1.05" in out.splitlines()
    assert "verdicts: 0 pass, 1 fail (exit status 6; --measure-only to only measure)" in out
    for args, text in ((["-q", "--measure-only"], OVERLOADED % ""), (["-q"], OVERLOADED % "measure_only = true; ")):
        rc, rep, out = suite(text, *args)
        assert rc == 0, out
        assert rep["exit_status"] == 0 and rep["measure_only"] is True and rep["verdicts_failed"] == 1, rep
        assert rep["verdicts"][0]["verdict"] == "fail"
        assert "(measure only: the exit status does not count them)" in out


def test_an_engine_sla_failure_is_a_verdict(suite, tmp_path):
    """A base config's SLA checks are the engine's verdicts (its exit status 6, the report valid):
    they are the suite's too."""
    base = tmp_path / "ring-sla.cfg"
    base.write_text((ROOT / "configs" / "ring-allreduce-4.cfg").read_text() +
                    '\nsla = ( { flow = "step0"; metric = "goodput_gbps"; min = 400.0; } );\n')
    text = 'suite = { name = "sla"; type = "collective"; base = "%s"; };\n' % base
    rc, rep, out = suite(text, "-q")
    assert rc == 6, out
    (t,) = rep["trials"]
    assert t["status"] == "ok" and t["exit_code"] == 6 and t["sla"] == "fail", t
    checks = {v["check"]: v for v in rep["verdicts"]}
    assert checks["sla"]["verdict"] == "fail" and checks["phases"]["verdict"] == "pass", rep["verdicts"]
    rc, rep, out = suite(text, "-q", "-m")
    assert rc == 0 and rep["verdicts_failed"] == 1, out


def test_errors_outrank_failed_verdicts(suite, tmp_path):
    fake = _fake_engine(tmp_path, 'kill -SEGV $$')
    rc, rep, out = suite(OVERLOADED % "", "-q", "-e", fake)
    assert rc == 4 and rep["exit_status"] == 4, out


def test_microburst_pfc_follows_xoff(suite):
    """XOFF is raised at enqueue by the frame that takes an ingress above xoff_kb: without XOFF each
    of the 4 ingress ports takes floor(16 KB / 1,020 B) = 16 frames, 64 in all (the expected value
    said 17 per ingress, 68)."""
    rc, rep, out = suite("""
suite = { name = "mbpfc"; type = "microburst"; };
lab = { link_gbps = 1.0; senders = 4; };
switch = { buffer_kb = 1024; pfc = { priorities = [3]; xoff_kb = 16; xon_kb = 8; headroom_kb = 256; }; };
microburst = { frame_size = 1024; min_burst = 8; max_burst = 128; resolution = 4; search = ["pfc"]; };
""", "-q")
    judged(rc, rep, out)
    (r,) = rep["microburst"]["results"]
    assert r["search"] == "pfc" and r["expected_frames"] == 4 * (16 * 1024 // 1020), r
    assert r["expected_frames"] - 4 <= r["burst_frames"] <= r["expected_frames"] + 2, r
    (v,) = rep["verdicts"]
    assert v["check"] == "pfc" and v["verdict"] == "pass", v


# ---- the machine check ------------------------------------------------------------------------------

def busy_lines(out):
    return [l for l in out.splitlines() if l.startswith("  ! busy machine: ")]


def test_busy_machine_warning_when_a_trial_cannot_carry_its_load(suite):
    """Two senders at 400 Gb/s into a 400 Gb/s port (47 Mpps of 1 KB frames through the lab's
    switch on one lcore): no machine carries that, and the incast row must say so on a line of its
    own, not read as a PFC result."""
    rc, rep, out = suite("""
suite = { name = "fast"; type = "incast"; };
lab = { link_gbps = 400.0; };
switch = { buffer_kb = 1024; };
trial = { duration_s = 0.2; };
incast = { senders = [2]; transfer_kb = 0; };
""", "-q")
    assert rc == 0, out
    (row,) = rep["incast"]["results"]
    assert row["machine_limited"] is True and row["carried_pct"] < 95, row
    assert rep["machine_limited"] == 1
    (line,) = busy_lines(out)
    assert line.startswith("  ! busy machine: 2 senders (steady) carried %.1f %%" % row["carried_pct"]), line
    lines = out.splitlines()
    assert lines[lines.index(line) - 1].lstrip().startswith("2 "), out   # under its row


# A stand-in engine that carries a chosen share (SHARE) of each trial's load: an incast's N
# flows f0.. at RATE Gb/s of FRAME-byte frames into a LINK Gb/s port, for the trial's -d seconds.
CARRIER = r'''#!/usr/bin/python3
import json, re, sys
args = sys.argv[1:]
secs = float(args[args.index("-d") + 1])
cfg = open(args[args.index("-f") + 1]).read()
n = len(re.findall(r'name = "f\d+";', cfg))
frame, rate, link, share = %d, %r, %r, %r
capacity = link * frame / (frame + 20)
fps = lambda gbps: gbps * 1e9 / (frame * 8)
sent = fps(rate) * secs
received = share * fps(min(n * rate, capacity)) * secs / n
flows = [{"name": "f%%d" %% i, "group": "f%%d" %% i, "port": "h%%d" %% i, "dest_qpn": 0x200 + i,
          "tx_packets": int(sent), "tx_bytes": int(sent) * (frame - 4), "rx_packets": int(received),
          "rx_bytes": int(received) * (frame - 4), "goodput_gbps": received * (frame - 62) * 8 / secs / 1e9}
         for i in range(n)]
json.dump({"version": 1, "duration_s": secs, "flows": flows, "ports": []}, open(args[args.index("-r") + 1], "w"))
'''


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_machine_check_against_a_stand_in_that_carries_a_share(suite, tmp_path, share):
    fake = tmp_path / "carrier.py"
    fake.write_text(CARRIER % (1086, 0.6, 1.0, share))
    fake.chmod(0o755)
    rc, rep, out = suite("""
suite = { name = "carry"; type = "incast"; };
lab = { link_gbps = 1.0; };
trial = { duration_s = 0.5; };
incast = { senders = [1, 3]; rate_gbps = 0.6; transfer_kb = 0; };
""", "-q", "-e", fake)
    assert rc == 0, out
    rows = {r["senders"]: r for r in rep["incast"]["results"]}
    # 1 x 0.6 Gb/s: its load; 3 x 0.6 Gb/s: the port's frame capacity, 1 x 1086 / 1106 Gb/s
    for n in (1, 3):
        assert rows[n]["carried_pct"] == pytest.approx(100 * share, abs=0.1), rows[n]
        assert rows[n]["machine_limited"] is (share < 0.95)
    if share < 0.95:
        assert len(busy_lines(out)) == 2 and rep["machine_limited"] == 2, out
        assert "2 results limited by the machine" in out
    else:
        assert busy_lines(out) == [] and rep["machine_limited"] == 0 and "limited by the machine" not in out, out

"""The AI-fabric suite's §9 collectives across hosts through cluster mode (docs/ai-fabric.md,
"Across hosts"): the shipped configs/suites/ai-fabric-cluster.cfg runs AllReduce, AllGather and
AlltoAll as one roce-cluster job of four ranks on the local lab (mpirun on this machine), and each
figure of the suite's report is held against the job's own files, computed here independently:

* the job the suite derived (RESULTS/cluster/job.cfg, as roce-cluster's report lists its tests):
  one collective test per op with the suite's S, iterations and QPs per pair over RC, the cluster
  file's lab as written, no SLA of its own;
* each iteration's busBW = S x 8 x factor / t with t from the job's iteration times and the factor
  by hand (ring AllReduce 2(N-1)/N, AllGather and AlltoAll (N-1)/N): the suite's per-iteration
  series and its mean, p50 and the cluster's own mean;
* what each rank received (its step summary, from its senders of that step only) is exactly the
  algorithm's bytes: iterations x phases x S/N from each peer it hears from;
* busBW never above the lab's link; every rank reported; the report's sections say the cluster;
* errors: a cluster file roce-cluster refuses is named at its own line, behind the suite file's;
  a job beyond the local lab's 16 ranks, or beyond the engine's 4,096 phases, is refused by
  --check (roce-cluster's own rule); a job whose ranks cannot start is a trial error (exit 4)
  naming the rank's reason; a suite of other categories without a fabric is still refused.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import engine_path

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "configs" / "suites" / "ai-fabric-cluster.cfg"
LOCAL = ROOT / "configs" / "cluster-local.cfg"
CLUSTER = ROOT / "build" / "apps" / "roce-cluster"
ENV = dict(os.environ, OMPI_MCA_btl="self,vader")

pytestmark = [pytest.mark.skipif(not CLUSTER.exists() or not shutil.which("mpirun"),
                                 reason="roce-cluster not built (no Open MPI)"),
              pytest.mark.release_only]


def suite_path():
    return Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite")).resolve()


def run(cfg, tmp, *args, timeout=300):
    env = dict(ENV, ROCE_ENGINE=str(engine_path().resolve()))
    return subprocess.run([str(suite_path()), str(cfg), "-o", str(tmp / "res"), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=str(tmp), env=env)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("aifcl")
    p = run(SUITE, tmp, "-q")
    rep = json.loads((tmp / "res" / "report.json").read_text()) if (tmp / "res" / "report.json").exists() else None
    clrep = tmp / "res" / "cluster" / "cluster-report.json"
    return p, rep, json.loads(clrep.read_text()) if clrep.exists() else None, tmp


FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n}
PHASES = {"allreduce": lambda n: 2 * (n - 1), "allgather": lambda n: n - 1, "alltoall": lambda n: 1}
S, ITERATIONS, QPS, N = 262144, 5, 2, 4   # the shipped file's


def test_the_suite_derives_one_collective_test_per_op(job):
    p, rep, cl, tmp = job
    assert p.returncode == 0, p.stdout + p.stderr
    assert cl["complete"] and cl["n_ranks"] == N and cl["missing_ranks"] == []
    assert [t["name"] for t in cl["tests"]] == ["allreduce", "allgather", "alltoall"]
    for t in cl["tests"]:
        assert (t["type"], t["op"], t["message_size"], t["qps_per_pair"], t["transport"]) == \
            ("collective", t["name"], S, QPS, "rc")
        assert t["summary"]["collective"]["iterations"] == ITERATIONS
    assert cl["sla"]["verdict"] == "none"            # the suite judges, not the job
    text = (tmp / "res" / "cluster" / "job.cfg").read_text()
    assert re.search(r"link_gbps\s*=\s*0\.5", text) and "buffer_kb" in text   # the cluster file's lab as written
    assert "sla" not in text


def test_busbw_per_iteration_from_the_jobs_iteration_times(job):
    p, rep, cl, tmp = job
    sec = rep["ai_fabric"]["sections"]
    coll = sec["5_results"]["collectives"]
    assert coll["where"] == "cluster" and coll["link_gbps"] == 0.5
    rows = {r["op"]: r for r in coll["rows"]}
    for t in cl["tests"]:
        r, c = rows[t["name"]], t["summary"]["collective"]
        assert r["ranks"] == N and r["ranks_reporting"] == N
        assert r["iterations_completed"] == ITERATIONS == len(c["iteration_us"])
        by_hand = [S * 8 * FACTOR[t["name"]](N) / (us * 1e-6) / 1e9 for us in c["iteration_us"]]
        assert r["busbw_per_iteration_gbps"] == pytest.approx(by_hand, rel=1e-6)
        mean = sum(by_hand) / len(by_hand)
        assert r["busbw_mean_gbps"] == pytest.approx(mean, rel=1e-6)
        assert r["cluster_busbw_mean_gbps"] == pytest.approx(mean, rel=1e-6)
        assert r["busbw_p50_gbps"] == pytest.approx(sorted(by_hand)[len(by_hand) // 2], rel=1e-6)
        assert r["algo_factor"] == pytest.approx(FACTOR[t["name"]](N))
        assert r["phases_per_iteration"] == PHASES[t["name"]](N)
        assert 0 < r["busbw_mean_gbps"] <= 0.5 * 1.001
        # a rank's held-up time over 1 % of its step marks the row as the machine's
        assert r.get("machine_limited", False) == (r["held_up_ms_max"] > 0.01 * 1e3 * max(
            s["duration_s"] for s in t["rounds"][0]["ranks"]))


def test_each_rank_received_the_algorithms_bytes(job):
    """Ring: from its predecessor, iterations x phases x S/N; AlltoAll: from each other rank,
    iterations x S/N. Exactly: the summaries count the step's senders' payload (RC retransmissions
    are counted once, as the receiver accepts them in order)."""
    p, rep, cl, tmp = job
    chunk = S // N
    for t in cl["tests"]:
        for s in t["rounds"][0]["ranks"]:
            got = {e["from"]: e["payload_bytes"] for e in s["rx"] if e["payload_bytes"]}
            if t["name"] == "alltoall":
                want = {k: ITERATIONS * chunk for k in range(N) if k != s["rank"]}
            else:
                want = {(s["rank"] - 1) % N: ITERATIONS * PHASES[t["name"]](N) * chunk}
            assert got == want, (t["name"], s["rank"])
            assert s["stray_payload_bytes"] == 0


def test_the_report_says_the_cluster(job):
    p, rep, cl, tmp = job
    sec = rep["ai_fabric"]["sections"]
    assert sec["2_topology"]["kind"] == "cluster" and sec["2_topology"]["cluster"]["ranks"] == N
    assert sec["3_dut_configuration"]["switch"]["buffer_kb"] == 1024       # the cluster file's lab.switch
    assert sec["4_host_configuration"]["host_link_gbps"] == 0.5
    md = (tmp / "res" / "report.md").read_text()
    assert "§9 collectives" in md and "cluster" in md and "topology.png" not in md
    assert (tmp / "res" / "collectives_busbw.png").exists() and not (tmp / "res" / "topology.png").exists()
    checks = {v["check"] for v in rep["verdicts"]}
    assert {"collective_completes", "busbw_at_most_link", "cluster_ranks_report"} <= checks
    assert all(v["verdict"] == "pass" for v in rep["verdicts"]), rep["verdicts"]


HEAD = 'suite = { name = "x"; type = "ai_fabric"; };\n'


@pytest.mark.parametrize("body,where,setting,says", [
    ('ai_fabric = { categories = ["collectives"]; collectives = { cluster = {\n file = "nosuch.cfg"; }; }; };', 3,
     "ai_fabric.collectives.cluster.file", "cannot read"),
    ('ai_fabric = { categories = ["collectives"]; collectives = { cluster = { file = "%s";\n ranks = 17; }; }; };' % LOCAL,
     3, "ai_fabric.collectives.cluster.ranks", "16 ranks at most"),
    ('ai_fabric = { categories = ["collectives"]; collectives = { iterations = 1000;\n cluster = { file = "%s"; ranks = 16; }; }; };'
     % LOCAL, 3, "ai_fabric.collectives.cluster", "30000 phases; the engine takes 4096"),
    ('ai_fabric = { categories = ["collectives", "jct"]; collectives = { cluster = { file = "%s"; }; }; };' % LOCAL, 1,
     "fabric", "missing"),
])
def test_a_bad_cluster_setting_is_refused_by_check(tmp_path, body, where, setting, says):
    cfg = tmp_path / "s.cfg"
    cfg.write_text(HEAD + body + "\n")
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith("%s:%d: %s: " % (cfg, where, setting)) and says in p.stderr, p.stderr


def test_a_cluster_file_roce_cluster_refuses_is_named_at_its_line(tmp_path):
    (tmp_path / "c.cfg").write_text('cluster = { name = "c"; };\nlab = { link_gbps = 900.0; };\n'
                                    'tests = ( { type = "collective"; op = "allreduce"; } );\n')
    cfg = tmp_path / "s.cfg"
    cfg.write_text(HEAD + 'ai_fabric = { categories = ["collectives"];\n collectives = { cluster = { file = "c.cfg"; }; }; };\n')
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith("%s:3: ai_fabric.collectives.cluster.file: %s/c.cfg:2: lab.link_gbps: " % (cfg, tmp_path)), \
        p.stderr
    # without a fabric, --check accepts the cluster-only suite it does run
    good = tmp_path / "g.cfg"
    good.write_text(HEAD + 'ai_fabric = { categories = ["collectives"]; collectives = { cluster = { file = "%s"; }; }; };\n'
                    % LOCAL)
    p = subprocess.run([str(suite_path()), "--check", str(good)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_job_whose_ranks_cannot_start_is_a_trial_error(tmp_path):
    """Only rank 0 has a port: the other ranks stop before any engine runs, and the suite says why
    (roce-cluster's own line) and exits 4, its report written."""
    (tmp_path / "c.cfg").write_text('cluster = { name = "c"; };\n'
                                    'ports = ( { rank = 0; device = "net_null0"; ipv4 = "10.0.0.1"; mac = "02:00:00:00:00:01"; } );\n'
                                    'tests = ( { type = "collective"; op = "allreduce"; } );\n')
    cfg = tmp_path / "s.cfg"
    cfg.write_text(HEAD + 'ai_fabric = { categories = ["collectives"]; collectives = { ops = ["allreduce"];\n'
                   ' cluster = { file = "c.cfg"; ranks = 2; launcher = "mpirun --allow-run-as-root -np {ranks}"; }; }; };\n')
    p = run(cfg, tmp_path, timeout=120)
    assert p.returncode == 4, p.stdout + p.stderr
    assert "no port for this rank" in p.stderr, p.stderr
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    assert any("did not run" in a["what"] for a in rep["ai_fabric"]["sections"]["6_anomalies"])

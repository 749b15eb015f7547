"""The AI-fabric suite across hosts through cluster mode (docs/ai-fabric.md, "Across hosts"): the
shipped configs/suites/ai-fabric-cluster.cfg runs §9's AllReduce, AllGather and AlltoAll and
§10.1's synthetic JCT as one roce-cluster job of four ranks on the local lab (mpirun on this
machine), and each figure of the suite's report is held against the job's own files, computed
here independently:

* the job the suite derived (RESULTS/cluster/job.cfg, as roce-cluster's report lists its tests):
  one collective test per op with the suite's S, iterations and QPs per pair over RC, one ring
  AllReduce with the compute step per (S, C) of §10.1, the cluster file's lab as written, no SLA
  of its own;
* §10.1: the JCT is the sum of the job's iteration times, the roofline iterations x (C + 8 S
  2(N-1)/N / B) with B the lab link's payload rate by hand; on every rank's own engine report,
  each iteration's first phase ended at least C after the previous iteration's last phase ended
  (the compute steps were kept across processes);
* each iteration's busBW = S x 8 x factor / t with t from the job's iteration times and the factor
  by hand (ring AllReduce 2(N-1)/N, AllGather and AlltoAll (N-1)/N): the suite's per-iteration
  series and its mean, p50 and the cluster's own mean;
* what each rank received (its step summary, from its senders of that step only) is exactly the
  algorithm's bytes: iterations x phases x S/N from each peer it hears from;
* busBW never above the lab's link; every rank reported; the report's sections say the cluster;
* errors: a cluster file roce-cluster refuses is named at its own line, behind the suite file's;
  a job beyond the local lab's 16 ranks, or beyond the engine's 4,096 phases, is refused by
  --check (roce-cluster's own rule); a job whose ranks cannot start is a trial error (exit 4)
  naming the rank's reason; a suite of other categories without a fabric is still refused;
  a suite stopped by Ctrl-C (exit 7, its report written) or killed outright leaves no rank, lab
  switch or engine running.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
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


COLL = ["allreduce", "allgather", "alltoall"]
JCT_NAME, C_MS, JCT_ITER = "jct262144-20", 20.0, 4


def coll_tests(cl):
    return [t for t in cl["tests"] if t["name"] in COLL]


def test_the_suite_derives_one_collective_test_per_op(job):
    p, rep, cl, tmp = job
    assert p.returncode == 0, p.stdout + p.stderr
    assert cl["complete"] and cl["n_ranks"] == N and cl["missing_ranks"] == []
    assert [t["name"] for t in cl["tests"]] == COLL + [JCT_NAME]
    for t in coll_tests(cl):
        assert (t["type"], t["op"], t["message_size"], t["qps_per_pair"], t["transport"], t["compute_ms"]) == \
            ("collective", t["name"], S, QPS, "rc", 0)
        assert t["summary"]["collective"]["iterations"] == ITERATIONS
    jt = cl["tests"][-1]
    assert (jt["op"], jt["message_size"], jt["compute_ms"], jt["summary"]["collective"]["iterations"]) == \
        ("allreduce", S, C_MS, JCT_ITER)
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
    for t in coll_tests(cl):
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
    for t in coll_tests(cl):
        for s in t["rounds"][0]["ranks"]:
            got = {e["from"]: e["payload_bytes"] for e in s["rx"] if e["payload_bytes"]}
            if t["name"] == "alltoall":
                want = {k: ITERATIONS * chunk for k in range(N) if k != s["rank"]}
            else:
                want = {(s["rank"] - 1) % N: ITERATIONS * PHASES[t["name"]](N) * chunk}
            assert got == want, (t["name"], s["rank"])
            assert s["stray_payload_bytes"] == 0


def test_retransmits_and_pauses_are_the_ranks_own_counts(job):
    """Each §9 row's RC packets, retransmissions and PFC XOFF frames received are the sums over
    the ranks' own engine reports of its step (gathered by rank 0 into RESULTS/cluster/reports)."""
    p, rep, cl, tmp = job
    rows = {r["op"]: r for r in rep["ai_fabric"]["sections"]["5_results"]["collectives"]["rows"]}
    for t in coll_tests(cl):
        tx = rtx = xoff = 0
        for s in t["rounds"][0]["ranks"]:
            er = json.loads((tmp / "res" / "cluster" / s["report_file"]).read_text())
            tx += sum(f["tx_packets"] for f in er["flows"])
            rtx += sum(f["retransmits"] for f in er["flows"])
            xoff += sum(sum(pt["pfc_rx_xoff"] or []) for pt in er["ports"])   # per priority
        r = rows[t["name"]]
        assert (r["rank_reports_read"], r["tx_packets"], r["retransmits"], r["pause_rx"]) == (N, tx, rtx, xoff)
        assert tx >= ITERATIONS * PHASES[t["name"]](N) * QPS * (N - 1 if t["name"] == "alltoall" else 1)
        assert r["retransmit_ppm"] == pytest.approx(rtx / tx * 1e6, rel=1e-9)


def test_jct_across_the_ranks_keeps_its_compute_steps(job):
    p, rep, cl, tmp = job
    jt = cl["tests"][-1]
    row = rep["ai_fabric"]["sections"]["5_results"]["jct"]["rows"][0]
    assert row["where"] == "cluster" and row["ranks"] == N and row["iterations_completed"] == JCT_ITER
    its = [us * 1e-6 for us in jt["summary"]["collective"]["iteration_us"]]
    assert row["jct_s"] == pytest.approx(sum(its), rel=1e-6)
    # the roofline by hand: B the payload a 0.5 Gb/s link carries in chunks of S/N = 64 KiB at IB
    # MTU 1024: 64 packets of 1024 B, each with 14 + 20 + 8 + 12 + 4 (ICRC) + 4 (FCS) + 20
    # (preamble and gap) bytes, and one RETH of 16
    chunk = S // N
    wire = chunk + 64 * (14 + 20 + 8 + 12 + 4 + 4 + 20) + 16
    b = 0.5 * chunk / wire
    roof = JCT_ITER * (C_MS * 1e-3 + 8 * S * 2 * (N - 1) / N / (b * 1e9))
    assert row["roofline_s"] == pytest.approx(roof, rel=1e-6)
    assert row["jct_ratio"] == pytest.approx(sum(its) / roof, rel=1e-6) and row["jct_ratio"] >= 1
    phases = 2 * (N - 1)
    for rank in range(N):
        er = json.loads((tmp / "res" / "cluster" / "reports" / ("%s-r0-rank%d.json" % (JCT_NAME, rank))).read_text())
        ends = er["collectives"][0]["phase_end_us"]
        assert len(ends) == JCT_ITER * phases
        for k in range(1, JCT_ITER):
            # the iteration's first phase starts C after the previous one's last ended, and ends later
            assert ends[k * phases] - ends[k * phases - 1] >= C_MS * 1e3, (rank, k)


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
    assert {"collective_completes", "busbw_at_most_link", "cluster_ranks_report", "jct_completes",
            "jct_at_least_roofline", "jct_compute_kept"} <= checks
    assert all(v["verdict"] == "pass" for v in rep["verdicts"]), rep["verdicts"]


HEAD = 'suite = { name = "x"; type = "ai_fabric"; };\n'


@pytest.mark.parametrize("body,where,setting,says", [
    ('ai_fabric = { categories = ["collectives"]; cluster = {\n file = "nosuch.cfg"; }; };', 3,
     "ai_fabric.cluster.file", "cannot read"),
    ('ai_fabric = { categories = ["collectives"]; cluster = { file = "%s";\n ranks = 17; }; };' % LOCAL,
     3, "ai_fabric.cluster.ranks", "16 ranks at most"),
    ('ai_fabric = { categories = ["collectives"]; collectives = { iterations = 1000; };\n cluster = { file = "%s"; ranks = 16; }; };'
     % LOCAL, 3, "ai_fabric.cluster", "allreduce across the cluster's 16 ranks: allreduce over 16 ranks, 1000 iterations: "
     "30000 phases; the engine takes 4096"),
    ('ai_fabric = { categories = ["jct"]; jct = { iterations = 1000; };\n cluster = { file = "%s"; ranks = 16; }; };'
     % LOCAL, 3, "ai_fabric.cluster", "jct's allreduce across the cluster's 16 ranks"),
    ('ai_fabric = { jct = {\n ranks = [4]; }; cluster = { file = "%s"; }; };' % LOCAL, 3, "ai_fabric.jct.ranks",
     "not with the cluster's jct"),
    ('ai_fabric = { cluster = { file = "%s";\n categories = ["soak"]; }; };' % LOCAL, 3, "ai_fabric.cluster.categories.[0]",
     "collectives, jct"),
    ('ai_fabric = { categories = ["collectives", "ecmp"]; cluster = { file = "%s"; }; };' % LOCAL, 1,
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
    cfg.write_text(HEAD + 'ai_fabric = { categories = ["collectives"];\n cluster = { file = "c.cfg"; }; };\n')
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith("%s:3: ai_fabric.cluster.file: %s/c.cfg:2: lab.link_gbps: " % (cfg, tmp_path)), \
        p.stderr
    # without a fabric, --check accepts the cluster-only suite it does run
    good = tmp_path / "g.cfg"
    good.write_text(HEAD + 'ai_fabric = { categories = ["collectives", "jct"]; cluster = { file = "%s"; }; };\n' % LOCAL)
    p = subprocess.run([str(suite_path()), "--check", str(good)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_job_whose_ranks_cannot_start_is_a_trial_error(tmp_path):
    """Only rank 0 has a port: the other ranks stop before any engine runs, and the suite says why
    (roce-cluster's own line) and exits 4, its report written."""
    (tmp_path / "c.cfg").write_text('cluster = { name = "c"; };\n'
                                    'ports = ( { rank = 0; device = "net_null0"; ipv4 = "10.0.0.1"; mac = "02:00:00:00:00:01"; } );\n'
                                    'tests = ( { type = "collective"; op = "allreduce"; } );\n')
    cfg = tmp_path / "s.cfg"
    cfg.write_text(HEAD + 'ai_fabric = { categories = ["collectives"]; collectives = { ops = ["allreduce"]; };\n'
                   ' cluster = { file = "c.cfg"; ranks = 2; launcher = "mpirun --allow-run-as-root -np {ranks}"; }; };\n')
    p = run(cfg, tmp_path, timeout=120)
    assert p.returncode == 4, p.stdout + p.stderr
    assert "no port for this rank" in p.stderr, p.stderr
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    assert any("did not run" in a["what"] for a in rep["ai_fabric"]["sections"]["6_anomalies"])


def _descendants(root):
    """{pid: cmdline} of every process below pid `root` (its children, theirs, ...), alive now."""
    parent = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = Path("/proc/%s/stat" % pid).read_text()
                parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p and c not in out:
                try:
                    out[c] = Path("/proc/%d/cmdline" % c).read_bytes().replace(b"\0", b" ")[:100]
                except OSError:
                    continue
                todo.append(c)
    return out


def _alive(pids):
    """Those of pids that still run (a zombie has ended)."""
    left = []
    for pid in pids:
        try:
            if Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[0] != "Z":
                left.append(pid)
        except OSError:
            pass
    return left


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_stopped_suite_leaves_no_rank_or_engine_behind(tmp_path, sig):
    """Ctrl-C during the job: the ranks are stopped (SIGTERM through the launcher: their engines and
    the lab switch end), the suite says it was interrupted (exit 7) and writes its report. roce-suite
    killed outright: the launcher dies with it (PR_SET_PDEATHSIG), and so do the ranks' engines."""
    shutil.copy(LOCAL, tmp_path / "c.cfg")
    cfg = tmp_path / "s.cfg"
    cfg.write_text(HEAD + 'ai_fabric = { categories = ["collectives"]; collectives = { ops = ["allreduce"];\n'
                   ' message_size = 4194304; iterations = 500; };\n'
                   ' cluster = { file = "c.cfg"; ranks = 2; launcher = "mpirun --allow-run-as-root -np {ranks}"; }; };\n')
    env = dict(ENV, ROCE_ENGINE=str(engine_path().resolve()))
    p = subprocess.Popen([str(suite_path()), str(cfg), "-o", str(tmp_path / "res")], cwd=str(tmp_path), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    tree = {}
    while sum(b"roce-engine" in c for c in tree.values()) < 3:   # two ranks' engines and the lab switch
        assert time.monotonic() < deadline and p.poll() is None, ("the job's engines did not start", tree)
        time.sleep(0.2)
        tree.update(_descendants(p.pid))
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert p.returncode == 7, out + err
        assert "interrupted" in err
        assert (tmp_path / "res" / "report.json").exists()
    deadline = time.monotonic() + 30
    while _alive(tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(tree), {k: tree[k] for k in _alive(tree)}

"""roce-cluster (docs/cluster.md): an MPI job of four ranks on this machine, each rank a host with
a memif port into the lab switch that rank 0 runs.

* Every pair is measured once: the three rounds of the round-robin tournament hold two pairs each,
  every rank in one pair a round, the six pairs once; the 4 x 4 bandwidth matrix has traffic on
  every pair and equals what each rank's own engine report says it received from each (kept with
  cluster.keep), and no more than what the sender sent or the link carries.
* One-way latency entries are the receivers' percentiles less the clock offsets (one machine:
  offsets within their uncertainty of zero), positive.
* The patterns: incast (every rank into the root, the root's rx at most its link), all_to_all (all
  twelve directions carry traffic, each receiver within its link), permutation (one cycle: each
  rank sends once and receives once) and pairs from a file (the rounds the file's order gives);
  each test's summary equals the sum of its own matrix, and a root beyond the job is refused.
* Collectives across the ranks' engines (RC: the CPU-starved lab drops a frame now and then, and
  one lost frame stalls a UC ring; UC rings are tested in one process and across two, on lossless
  links, in test_collective_receives.py): a ring AllReduce, an AlltoAll and (with DCQCN) an
  AllGather complete every
  iteration; each rank received exactly the algorithm's bytes (phases x QPs x chunk); a ring
  rank's phase ends after its predecessor's previous phase (the data gates the phases across
  processes); busBW within the link's rate and equal to S x factor over the iteration times.
* Faults: ranks that read different files are refused (exit 3) naming a rank; a rank whose port
  is no device ends the job naming it (exit 4); a rank killed mid-run is reported missing by rank 0
  (mpirun --enable-recovery), which still writes the others' results (the report's exit_status 7).
"""
import json
import re
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT

CLUSTER = ROOT / "build" / "apps" / "roce-cluster"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")

# the release build's (its model's unit tests run on the ASan build too; LeakSanitizer would
# report Open MPI's own allocations at every rank's exit)
pytestmark = [pytest.mark.skipif(not CLUSTER.exists(), reason="roce-cluster not built (no Open MPI development files)"),
              pytest.mark.release_only]

# a 2 s start margin: these steps send for half a second, so an engine that starts late (four
# start at once beside the lab on two cores) would miss its peer's traffic altogether
LOCAL = """
cluster = { name = "t"; results = "res"; step_timeout_s = 20.0; start_margin_s = 2.0; keep = true; memory_mb = 256; live_interval_s = 0.2; };
lab = { link_gbps = 0.5; switch = { buffer_kb = 1024; pfc = { priorities = [3]; }; }; };
tests = (
  { name = "bw"; type = "pairwise"; measure = "bandwidth"; message_size = 65536; qps_per_pair = 2; duration_s = 0.6; },
  { name = "lat"; type = "pairwise"; measure = "latency"; probe_pps = 2000; duration_s = 0.5; }
);
"""


def mpirun(tmp_path, text, n=4, extra=(), files=None, timeout=240):
    (tmp_path / "c.cfg").write_text(text)
    cmd = ["mpirun", "--oversubscribe", *extra]
    if files:  # MPMD: different files for different ranks
        for i, (k, name) in enumerate(files):
            cmd += ([":"] if i else []) + ["-np", str(k), str(CLUSTER), name]
    else:
        cmd += ["-np", str(n), str(CLUSTER), "c.cfg"]
    return subprocess.run(cmd, cwd=str(tmp_path), env=ENV, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    p = mpirun(tmp, LOCAL)
    return p, tmp


def test_every_pair_measured_once_and_the_matrix_is_the_ranks_reports(local_run):
    p, tmp = local_run
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp / "res" / "cluster-report.json").read_text())
    assert rep["complete"] and rep["n_ranks"] == 4 and rep["missing_ranks"] == []
    bw = next(t for t in rep["tests"] if t["name"] == "bw")
    assert len(bw["rounds"]) == 3
    seen = []
    for r in bw["rounds"]:
        assert 0 <= r["start_spread_ms"] < 50, r["start_spread_ms"]  # started together
        ranks = [x for pair in r["pairs"] for x in pair]
        assert sorted(ranks) == [0, 1, 2, 3]                 # each rank in one pair a round
        seen += [tuple(sorted(pair)) for pair in r["pairs"]]
    assert sorted(seen) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    m = rep["matrix"]["bandwidth_gbps"]
    for i in range(4):
        assert m[i][i] is None
        for j in range(4):
            if i != j:
                assert 0 < m[i][j] <= 0.5 * 1.02, (i, j, m[i][j])  # traffic on every pair, within the link
    # the matrix against each rank's own engine report (kept: res/rankJ/bw-sSTEP/report.json)
    for step, r in enumerate(bw["rounds"]):
        for a, b in r["pairs"]:
            for i, j in ((a, b), (b, a)):
                er = json.loads((tmp / "res" / ("rank%d" % j) / ("bw-s%d" % step) / "report.json").read_text())
                got = sum(q["payload_bytes"] for q in er["rx_qps"] if (q["qpn"] - 0x10000) >> 6 == i)
                assert m[i][j] == pytest.approx(got * 8 / er["duration_s"] / 1e9, rel=1e-6)
                sr = json.loads((tmp / "res" / ("rank%d" % i) / ("bw-s%d" % step) / "report.json").read_text())
                sent = sum(f["tx_bytes"] for f in sr["flows"] if f["group"] == "to%d" % j)
                assert got <= sent
                # the two engines started together (run.start_at_unix_s), within 50 ms on one machine
                assert abs(er["start_unix_ns"] - sr["start_unix_ns"]) < 50e6
        # every rank's whole report gathered to rank 0's results folder; nothing came in from a
        # rank outside the step (frames of an earlier step the lab kept for a port whose engine
        # had left would: the lab drops them, as a switch flushes a port that lost its link)
        for sm in r["ranks"]:
            assert sm["stray_payload_bytes"] == 0, sm
            kept = json.loads((tmp / "res" / ("rank%d" % sm["rank"]) / ("bw-s%d" % step) / "report.json").read_text())
            assert json.loads((tmp / "res" / sm["report_file"]).read_text()) == kept


def test_rank_0_prints_live_lines_of_all_ranks(local_run):
    p, tmp = local_run
    live = re.findall(r"^\[bw\] round (\d)/3 \+([\d.]+) s: (\d)/4 ranks, tx ([\d.]+) Gb/s, rx ([\d.]+) Gb/s, "
                      r"a rank's rx ([\d.]+) \(rank (\d)\)\.\.([\d.]+)", p.stdout, re.M)
    assert live, p.stdout
    assert max(int(x[2]) for x in live) >= 2, live        # the other ranks' numbers reached rank 0
    for rnd, t, n, tx, rx, lo, lo_rank, hi in live:
        # the sum of the ranks' is at least the most one rank got, and at most n of it
        assert float(tx) > 0 and float(lo) <= float(hi) <= float(rx) <= int(n) * float(hi) + 1e-3
    assert any("one-way p50 up to" in l for l in p.stdout.splitlines() if l.startswith("[lat] round") and "+" in l)


def test_each_rank_serves_metrics_on_its_port_offset_by_its_local_rank(tmp_path):
    import urllib.request
    base = 20000 + os.getpid() % 20000
    text = LOCAL.replace("live_interval_s = 0.2;", "metrics_port = %d; metrics_address = \"127.0.0.1\";" % base) \
                .replace("duration_s = 0.6;", "duration_s = 3.0;").replace('schedule = "round_robin";', "")
    text = text.replace('{ name = "bw"; type = "pairwise";', '{ name = "bw"; type = "pairwise"; schedule = "half";')
    (tmp_path / "c.cfg").write_text(text)
    proc = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "2", str(CLUSTER), "c.cfg"], cwd=str(tmp_path), env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = {}
    deadline = time.time() + 60
    while len(seen) < 2 and time.time() < deadline and proc.poll() is None:
        for local in (0, 1):                              # one host: local rank = rank
            if local in seen:
                continue
            try:
                body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % (base + local), timeout=1).read().decode()
            except OSError:
                continue
            if "roce_port_tx_bytes_total" in body:
                seen[local] = body
        time.sleep(0.1)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, out
    assert sorted(seen) == [0, 1], out
    for body in seen.values():   # each rank's own engine: its port, its MAC
        assert 'port="p"' in body


def test_latency_is_the_receivers_less_the_clock_offsets(local_run):
    p, tmp = local_run
    rep = json.loads((tmp / "res" / "cluster-report.json").read_text())
    off = {r["rank"]: r["clock"] for r in rep["ranks"]}
    for r, c in off.items():   # one machine, one clock: the offset within its uncertainty (and a margin)
        assert abs(c["offset_ns"]) <= c["uncertainty_ns"] + 50000, (r, c)
        assert c["rtt_ns"] > 0 or r == 0
    lat = next(t for t in rep["tests"] if t["name"] == "lat")
    p50 = rep["matrix"]["latency_ns"]["p50"]
    checked = 0
    for rnd in lat["rounds"]:
        for s in rnd["ranks"]:
            j = s["rank"]
            for e in s.get("rx", []):
                i = e["from"]
                assert e["latency_count"] > 0
                skew = off[j]["offset_ns"] - off[i]["offset_ns"]
                assert p50[i][j] == pytest.approx(e["p50_ns"] - skew, abs=1e-3)
                assert p50[i][j] > 0
                checked += 1
    assert checked == 12


def test_heatmaps_are_drawn(local_run):
    p, tmp = local_run
    for png in ("bandwidth.png", "latency_p50.png", "latency_p99.png"):
        assert (tmp / "res" / png).stat().st_size > 1000, png


def test_ranks_with_different_files_are_refused(tmp_path):
    (tmp_path / "b.cfg").write_text(LOCAL.replace('name = "t"', 'name = "other"'))
    (tmp_path / "a.cfg").write_text(LOCAL)
    p = mpirun(tmp_path, LOCAL, files=[(2, "a.cfg"), (2, "b.cfg")])
    assert p.returncode == 3, p.stdout + p.stderr
    assert "rank 2 (host " in p.stderr and "read a different" in p.stderr, p.stderr
    assert not (tmp_path / "res").exists()


def test_a_config_error_names_file_line_and_setting(tmp_path):
    p = mpirun(tmp_path, LOCAL.replace("qps_per_pair = 2;", "qps_per_pair = 99;"), n=2)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "c.cfg:5: tests.[0].qps_per_pair:" in p.stderr, p.stderr
    assert p.stderr.count("qps_per_pair") == 1       # said once, by rank 0


def test_a_rank_that_cannot_start_ends_the_job_naming_it(tmp_path):
    text = """
cluster = { results = "res"; step_timeout_s = 20.0; start_margin_s = 2.0; };
ports = (
  { rank = 1; device = "net_nosuchdevice0"; ipv4 = "10.9.0.{rank1}"; mac = "02:00:00:00:09:0{rank}"; },
  { local_rank = 0; device = "net_null{rank}"; ipv4 = "10.9.0.{rank1}"; mac = "02:00:00:00:09:0{rank}"; },
  { local_rank = 1; device = "net_null{rank}"; ipv4 = "10.9.0.{rank1}"; mac = "02:00:00:00:09:0{rank}"; }
);
tests = ( { name = "bw"; type = "pairwise"; schedule = "half"; duration_s = 0.3; } );
"""
    p = mpirun(tmp_path, text, n=2)
    assert p.returncode == 4, p.stdout + p.stderr
    lines = [l for l in p.stderr.splitlines() if "cannot start its engine" in l]
    assert len(lines) == 1 and lines[0].startswith("roce-cluster: rank 1 (host "), p.stderr
    rep = json.loads((tmp_path / "res" / "cluster-report.json").read_text())
    assert any("error" in s for s in rep["tests"][0]["rounds"][0]["ranks"])


PATTERNS = """
cluster = { name = "t"; results = "res"; step_timeout_s = 20.0; start_margin_s = 2.0; memory_mb = 256; live_interval_s = 0.1; };
lab = { link_gbps = 0.5; switch = { buffer_kb = 1024; pfc = { priorities = [3]; }; }; };
tests = (
  { name = "file"; type = "pairwise"; schedule = "file"; pairs_file = "pairs.txt"; duration_s = 0.4; },
  { name = "incast"; type = "incast"; root = 2; qps_per_pair = 2; duration_s = 0.5; },
  { name = "a2a"; type = "all_to_all"; duration_s = 0.5; },
  { name = "perm"; type = "permutation"; seed = 11; duration_s = 0.5; }
);
"""


@pytest.fixture(scope="module")
def patterns_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("patterns")
    (tmp / "pairs.txt").write_text("# the rounds: 0-1 and 2-3, then 1-2 and 0-3, then 3-2 (rank 0 sits out)\n"
                                   "0 1\n2 3\n1 2   # after 1's and 2's round 0\n0 3\n3 2\n")
    return mpirun(tmp, PATTERNS), tmp


def _test(rep, name):
    return next(t for t in rep["tests"] if t["name"] == name)


def _gbps(m, i, j):
    return m[i][j] or 0


def test_patterns_run_their_flows_and_summaries_sum_their_matrices(patterns_run):
    p, tmp = patterns_run
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp / "res" / "cluster-report.json").read_text())
    f = _test(rep, "file")
    assert [sorted(map(tuple, r["pairs"])) for r in f["rounds"]] == [[(0, 1), (2, 3)], [(0, 3), (1, 2)], [(3, 2)]]
    inc = _test(rep, "incast")
    assert sorted(map(tuple, inc["rounds"][0]["flows"])) == [(0, 2), (1, 2), (3, 2)]
    m = inc["summary"]["matrix"]["bandwidth_gbps"]
    for i in range(4):
        for j in range(4):
            assert (m[i][j] or 0) > 0 if (j == 2 and i != 2) else m[i][j] is None, (i, j, m[i][j])
    assert inc["summary"]["root_rx_gbps"] == pytest.approx(sum(_gbps(m, i, 2) for i in range(4)), rel=1e-9)
    assert inc["summary"]["root_rx_gbps"] <= 0.5 * 1.02
    a2a = _test(rep, "a2a")
    m = a2a["summary"]["matrix"]["bandwidth_gbps"]
    assert len(a2a["rounds"][0]["flows"]) == 12
    for j in range(4):
        assert sum(_gbps(m, i, j) for i in range(4)) <= 0.5 * 1.02
        for i in range(4):
            assert (m[i][j] or 0) > 0 if i != j else m[i][j] is None
    assert a2a["summary"]["aggregate_gbps"] == pytest.approx(sum(_gbps(m, i, j) for i in range(4) for j in range(4)))
    assert 0.25 <= a2a["summary"]["jfi"] <= 1.0
    perm = _test(rep, "perm")
    dst = dict(map(tuple, perm["rounds"][0]["flows"]))
    assert sorted(dst) == [0, 1, 2, 3] and sorted(dst.values()) == [0, 1, 2, 3]
    at, steps = dst[0], 1
    while at != 0:
        at, steps = dst[at], steps + 1
    assert steps == 4                                   # one cycle through the four ranks
    m = perm["summary"]["matrix"]["bandwidth_gbps"]
    assert all((m[i][dst[i]] or 0) > 0 for i in range(4))
    # the top-level matrix is the pairwise tests' (a pair measured alone): the file's pairs only
    top = rep["matrix"]["bandwidth_gbps"]
    assert top[0][2] is None and top[2][0] is None and top[1][3] is None
    assert all(top[a][b] > 0 for a, b in ((0, 1), (1, 0), (2, 3), (1, 2), (0, 3), (3, 0)))


def test_rank_0_sitting_a_round_out_still_prints_the_others_live_lines(patterns_run):
    p, tmp = patterns_run
    live = re.findall(r"^\[file\] round 3/3 \+([\d.]+) s: (\d)/4 ranks, tx ([\d.]+) Gb/s", p.stdout, re.M)
    assert live, p.stdout                               # ranks 2 and 3 only: rank 0 ran no engine
    assert all(1 <= int(n) <= 2 and float(tx) > 0 for _, n, tx in live), live


def test_a_root_beyond_the_job_is_refused_naming_the_test(tmp_path):
    (tmp_path / "pairs.txt").write_text("0 1\n")
    p = mpirun(tmp_path, PATTERNS.replace("root = 2;", "root = 6;"), n=4)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "c.cfg:6: tests: incast: root 6 is not one of the job's 4 ranks" in p.stderr, p.stderr


COLLECTIVES = """
cluster = { name = "t"; results = "res"; step_timeout_s = 20.0; start_margin_s = 2.0; memory_mb = 256; keep = true; };
lab = { link_gbps = 0.5; switch = { buffer_kb = 1024; pfc = { priorities = [3]; }; }; };
tests = (
  { name = "ar"; type = "collective"; op = "allreduce"; transport = "rc"; message_size = 262144; qps_per_pair = 2;
    iterations = 5; duration_s = 10.0; },
  { name = "a2a"; type = "collective"; op = "alltoall"; transport = "rc"; message_size = 131072; iterations = 4;
    duration_s = 10.0; },
  { name = "ag"; type = "collective"; op = "allgather"; transport = "rc"; cc = "dcqcn"; message_size = 262144;
    iterations = 4; duration_s = 10.0; }
);
"""


@pytest.fixture(scope="module")
def collectives_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("collectives")
    return mpirun(tmp, COLLECTIVES), tmp


def test_collectives_complete_with_the_algorithms_bytes_and_busbw(collectives_run):
    p, tmp = collectives_run
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp / "res" / "cluster-report.json").read_text())
    for name, phases, senders in (("ar", 6, 1), ("a2a", 1, 3), ("ag", 3, 1)):
        t = _test(rep, name)
        c = t["summary"]["collective"]
        assert t["phases_per_iteration"] == phases
        assert c["ranks_reporting"] == 4 and c["iterations_completed"] == t["iterations"], c
        # every rank received exactly what the algorithm moves: from each of its senders, each QP
        # one chunk per phase
        want = senders * t["iterations"] * phases * t["qps_per_pair"] * t["message_per_qp"]
        for s in t["rounds"][0]["ranks"]:
            assert sum(e["payload_bytes"] for e in s["rx"]) == want, (name, s["rank"])
            assert s["collective"]["phases_completed"] == t["iterations"] * phases
        assert sum(c["iteration_us"]) == pytest.approx(c["total_us"])
        bus = [t["message_size"] * 8 * c["bus_factor"] / (x * 1e3) for x in c["iteration_us"]]
        assert max(bus) == pytest.approx(c["busbw_gbps"]["max"])
        assert c["busbw_gbps"]["max"] <= 0.5 * 1.05     # no rank's link carries more than its rate
        assert c["bus_factor"] == pytest.approx(2 * 3 / 4 if name == "ar" else 3 / 4)
    # RC across processes: each rank's responders acknowledged what it received (no duplicates
    # counted twice: the receivers' bytes above are exact)
    ag = _test(rep, "ag")
    assert ag["transport"] == "rc" and ag["cc"] == "dcqcn"


def test_a_ring_phase_waits_for_the_predecessors_chunk(collectives_run):
    p, tmp = collectives_run
    rep = json.loads((tmp / "res" / "cluster-report.json").read_text())
    ar = _test(rep, "ar")
    off = {r["rank"]: r["clock"] for r in rep["ranks"]}
    ends = {}
    for s in ar["rounds"][0]["ranks"]:                  # each phase's end in rank 0's time, ns
        r = s["rank"]
        ends[r] = [s["start_unix_ns"] - off[r]["offset_ns"] + e * 1e3 for e in s["collective"]["phase_end_us"]]
    checked = 0
    for r in range(4):
        prev = (r + 3) % 4
        slack = off[r]["uncertainty_ns"] + off[prev]["uncertainty_ns"]
        for k in range(1, len(ends[r])):
            # r's phase k needs prev's chunk k, which prev sends only once its phase k-1 ended
            assert ends[r][k] + slack >= ends[prev][k - 1], (r, k, ends[r][k] - ends[prev][k - 1])
            checked += 1
    assert checked == 4 * (30 - 1)


def test_ranks_on_ipv6_addresses(tmp_path):
    text = LOCAL.replace("lab = { link_gbps = 0.5;", "lab = { link_gbps = 0.5; ip_version = 6;") \
                .replace('{ name = "bw"; type = "pairwise";', '{ name = "bw"; type = "pairwise"; schedule = "half";')
    text = text.split("  { name = \"lat\"")[0].rstrip().rstrip(",") + "\n);\n"
    p = mpirun(tmp_path, text, n=2)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp_path / "res" / "cluster-report.json").read_text())
    assert [r["ipv6"] for r in rep["ranks"]] == ["fd77::1", "fd77::2"]
    m = rep["matrix"]["bandwidth_gbps"]
    assert m[0][1] > 0 and m[1][0] > 0
    eng = (tmp_path / "res" / "rank0" / "bw-s0" / "engine.cfg").read_text()
    assert 'ipv6 = "fd77::1"' in eng and 'dst_ip = "fd77::2"' in eng


def test_a_collective_below_its_busbw_threshold_fails_the_sla(tmp_path):
    text = COLLECTIVES.split("tests = (")[0] + """tests = (
  { name = "ar"; type = "collective"; op = "allreduce"; transport = "rc"; message_size = 65536; iterations = 2;
    duration_s = 10.0; }
);
sla = { min_busbw_gbps = 100.0; };
"""
    p = mpirun(tmp_path, text, n=2)
    assert p.returncode == 6, p.stdout + p.stderr
    rep = json.loads((tmp_path / "res" / "cluster-report.json").read_text())
    check = rep["sla"]["checks"][0]
    assert rep["sla"]["verdict"] == "fail" and rep["exit_status"] == 6
    assert check["check"] == "min_busbw_gbps" and check["test"] == "ar" and check["verdict"] == "fail"
    assert 0 < check["busbw_gbps_mean"] < 100


def test_the_shipped_local_cluster_fills_its_matrices_and_runs_its_allreduce(tmp_path):
    shipped = (ROOT / "configs" / "cluster-local.cfg").read_text()
    p = mpirun(tmp_path, shipped)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp_path / "cluster-results" / "cluster-report.json").read_text())
    bw, p50 = rep["matrix"]["bandwidth_gbps"], rep["matrix"]["latency_ns"]["p50"]
    for i in range(4):
        for j in range(4):
            if i != j:
                assert bw[i][j] > 0 and p50[i][j] > 0, (i, j)
    inc = _test(rep, "incast")["summary"]
    assert inc["directions_measured"] == 3 and 0 < inc["root_rx_gbps"] <= 0.5 * 1.02
    ar = _test(rep, "allreduce")["summary"]["collective"]
    errors = [(s["rank"], s.get("error"), s.get("exit_code")) for s in _test(rep, "allreduce")["rounds"][0]["ranks"]]
    assert ar["iterations_completed"] == 10 and 0 < ar["busbw_gbps"]["max"] <= 0.5 * 1.05, (errors, p.stdout)
    assert (tmp_path / "cluster-results" / "bandwidth.png").exists()


def _rank_pids(rank):
    out = subprocess.run(["pgrep", "-f", "roce-cluster c.cfg"], capture_output=True, text=True).stdout.split()
    for pid in out:
        try:
            env = Path("/proc/%s/environ" % pid).read_bytes().split(b"\0")
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK=%d" % rank in env:
            yield int(pid)


def test_a_rank_that_dies_is_reported_missing_and_the_others_results_kept(tmp_path):
    text = LOCAL.replace("duration_s = 0.6;", "duration_s = 1.5;").replace("step_timeout_s = 20.0", "step_timeout_s = 5.0")
    (tmp_path / "c.cfg").write_text(text)
    proc = subprocess.Popen(["mpirun", "--oversubscribe", "--enable-recovery", "-np", "4", str(CLUSTER), "c.cfg"],
                            cwd=str(tmp_path), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = ""
    for line in proc.stdout:                             # the first round is done: kill rank 3
        out += line
        if "round 1/3: " in line:                       # (the round's end, not a live line in it)
            for pid in _rank_pids(3):
                os.kill(pid, signal.SIGKILL)
            break
    out += proc.communicate(timeout=240)[0]
    # (mpirun --enable-recovery exits 0 whatever its ranks do: the report and rank 0 say the status)
    rep = json.loads((tmp_path / "res" / "cluster-report.json").read_text())
    assert rep["exit_status"] == 7 and not rep["complete"], out
    assert "roce-cluster: rank 3 (host " in out and "is missing" in out, out
    assert rep["missing_ranks"] == [3], rep["missing_ranks"]
    assert [r["missing"] for r in rep["ranks"]] == [False, False, False, True]
    m = rep["matrix"]["bandwidth_gbps"]
    first = rep["tests"][0]["rounds"][0]["pairs"]     # round 1's pairs were all measured, rank 3's too
    for a, b in first:
        assert m[a][b] and m[b][a]
    assert len(rep["tests"][0]["rounds"]) == 2          # round 2 ran without rank 3: the job ended there

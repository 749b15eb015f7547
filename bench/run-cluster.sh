#!/usr/bin/env bash
# roce-cluster's cost per step on this machine (docs/performance.md#cluster-mode-steps): a job of
# RANKS ranks on the local lab runs a pairwise round-robin test (RANKS-1 rounds, or RANKS when
# odd) of SECONDS each, once per start margin in MARGINS; per job the wall time, the traffic's
# time (rounds x SECONDS), the overhead a step costs beyond its traffic (the start margin, the
# engines' exit and report, the summaries to rank 0), the largest start spread of the engines
# (how far apart they began: a margin too short shows here) and each rank's peak memory
# (roce-cluster itself, not its engines).
# Usage: bench/run-cluster.sh [BUILD_DIR] [RANKS] [SECONDS] [MARGINS]   (default: build 4 1 "2 1 0.5")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ranks=${2:-4}
secs=${3:-1}
margins=${4:-2 1 0.5}
exe="$PWD/$build/apps/roce-cluster"
[ -x "$exe" ] || { echo "run-cluster: $exe not built (Open MPI's development files?)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-cluster.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader

printf '%-8s %6s %8s %10s %10s %14s %12s %10s\n' margin_s ranks rounds wall_s traffic_s overhead_s/step spread_ms rss_mb
for m in $margins; do
  cat >"$tmp/c.cfg" <<CFG
cluster = { name = "bench"; results = "res"; start_margin_s = $m; live_interval_s = 0; };
lab = { link_gbps = 0.5; switch = { buffer_kb = 1024; pfc = { priorities = [3]; }; }; };
tests = ( { name = "bw"; type = "pairwise"; schedule = "round_robin"; duration_s = $secs; } );
CFG
  start=$(date +%s.%N)
  (cd "$tmp" && /usr/bin/time -f "%M" -o rss.txt mpirun --oversubscribe -np "$ranks" \
      /usr/bin/time -a -f "%M" -o "$tmp/rss.txt" "$exe" c.cfg >job.log 2>&1) || { cat "$tmp/job.log"; exit 1; }
  end=$(date +%s.%N)
  /usr/bin/python3 - "$tmp" "$m" "$ranks" "$secs" "$start" "$end" <<'PY'
import json, sys
tmp, m, n, secs, t0, t1 = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rep = json.load(open(tmp + "/res/cluster-report.json"))
rounds = rep["tests"][0]["rounds"]
wall = t1 - t0
traffic = len(rounds) * secs
spread = max(r["start_spread_ms"] for r in rounds)
rss = [int(x) for x in open(tmp + "/rss.txt").read().split()]
print("%-8g %6d %8d %10.1f %10.1f %14.2f %12.2f %10.1f" % (m, n, len(rounds), wall, traffic,
      (wall - traffic) / len(rounds), spread, max(rss[1:] or rss) / 1024))
PY
  rm -rf "$tmp/res" "$tmp/rss.txt"
done

#!/usr/bin/env bash
# roce-ccsim's fabric model next to htsim's RoCE model (Broadcom/csg-htsim, sim/datacenter/htsim_roce)
# on the same fabrics and kind of traffic, in one run: wall time, peak memory and what each carries.
#   128 hosts: htsim_roce -tiers 2 -nodes 128 (16 leaves of 8, 8 spines) against
#              configs/ccsim/fabric-128-permutation.cfg (the same fabric, htsim's RoCE model:
#              no congestion control, PFC at 15 packets, 9,000-byte payloads + 64 bytes);
#   1,024 hosts: htsim_roce -tiers 3 -nodes 1024 (K = 16: 128 ToRs of 8, 16 pods, 64 cores) against
#              configs/ccsim/fabric-fat-tree-1024.cfg at htsim's frame size.
# Both run a random permutation of long flows for DURATION_US (each its own draw: htsim seeds its
# ECMP paths from the clock, so its figures move a few points from run to run). Figures: the flows'
# goodput over the run as a share of hosts x 100 Gb/s, the per-flow median and Jain's index.
# htsim is not part of the project: build it apart (git clone https://github.com/Broadcom/csg-htsim;
# cd csg-htsim/sim && make -j2; cd datacenter && make -j2) and give its sim/ directory.
# Usage: HTSIM=/path/to/csg-htsim/sim bench/run-ccsim-htsim.sh [BUILD_DIR] [DURATION_US]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dur=${2:-2000}
ccsim="$build/apps/roce-ccsim"
: "${HTSIM:?set HTSIM to a built csg-htsim sim/ directory (see the comment at the top)}"
roce="$HTSIM/datacenter/htsim_roce"
parse="$HTSIM/parse_output"
[ -x "$ccsim" ] && [ -x "$roce" ] && [ -x "$parse" ] || { echo "need $ccsim, $roce and $parse" >&2; exit 1; }
work=$(mktemp -d /tmp/ccsim-htsim.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A derangement: every host sends to one other and receives from one (htsim's connection matrix).
perm() { # nodes file
  python3 - "$1" "$2" <<'EOF'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
while True:
    d = list(range(n)); rng.shuffle(d)
    if all(d[i] != i for i in range(n)): break
with open(path, "w") as f:
    f.write("Nodes %d\nConnections %d\n" % (n, n))
    for s in range(n):
        f.write("%d->%d id %d start 0\n" % (s, d[s], s + 1))
EOF
}

# The goodput share, median and Jain's index of htsim's sinks: parse_output's ASCII lines of
# ROCE_SINK events carry the time (s, field 1), the sink's id (field 5) and its cumulative
# acknowledged bytes (field 9); a flow's rate is its bytes at the last sample over that time.
htsim_figures() { # run-dir
  "$parse" "$1/sink.log" -ascii | python3 -c '
import statistics, sys
last = {}
for line in sys.stdin:
    p = line.split()
    if len(p) > 8 and p[2] == "ROCE_SINK":
        last[p[4]] = (float(p[0]), int(p[8]))
t = max(v[0] for v in last.values())
r = [b * 8 / t / 1e9 for _, b in last.values()]
print("%.1f %% %.1f %.3f" % (100 * sum(r) / (100 * len(r)), statistics.median(r), sum(r) ** 2 / (len(r) * sum(x * x for x in r))))'
}

ccsim_figures() { # summary.json hosts
  python3 -c '
import json, statistics, sys
s = json.load(open(sys.argv[1]))
r = [f["goodput_gbps"] for f in s["flows"]]
print("%.1f %% %.1f %.3f" % (100 * sum(r) / (100 * int(sys.argv[2])), statistics.median(r), s["fabric"]["jfi"]))' "$1" "$2"
}

timed() { # out-prefix command...: wall seconds and peak RSS (MB) into out-prefix.time
  local out=$1; shift
  /usr/bin/time -f "%e %M" -o "$out.time" "$@" > "$out.stdout" 2>&1
  awk '{ printf "%.2f s %.0f MB", $1, $2 / 1024 }' "$out.time"
}

printf "%-28s %-22s %-22s %-26s %-26s\n" "run" "roce-ccsim" "htsim" "roce-ccsim share p50 JFI" "htsim share p50 JFI"
run_pair() { # label hosts ccsim-cfg htsim-args...
  local label=$1 hosts=$2 cfg=$3; shift 3
  local d="$work/$label"
  mkdir -p "$d"
  sed -e "s/^duration_us = .*/duration_us = $dur;/" -e "s/^window_us = .*/window_us = [0, $dur];/" \
      -e 's/mtu_bytes = [0-9]*/mtu_bytes = 9064/' "$cfg" > "$d/s.cfg"
  local tc th
  tc=$(timed "$d/ccsim" "$ccsim" -q -s "$d/s.json" "$d/s.cfg")
  perm "$hosts" "$d/perm.cm"
  th=$( cd "$d" && timed "$d/htsim" "$roce" "$@" -tm "$d/perm.cm" -strat ecmp_host -paths 256 \
        -end $((dur + 1)) -log sink -logtime 0.1 -o "$d/sink.log" )
  printf "%-28s %-22s %-22s %-26s %-26s\n" "$label" "$tc" "$th" "$(ccsim_figures "$d/s.json" "$hosts")" "$(htsim_figures "$d")"
}
run_pair "128 hosts, 2 tiers" 128 configs/ccsim/fabric-128-permutation.cfg -tiers 2 -nodes 128
run_pair "1,024 hosts, fat-tree k=16" 1024 configs/ccsim/fabric-fat-tree-1024.cfg -tiers 3 -nodes 1024
echo "simulated: $dur us each"

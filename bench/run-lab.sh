#!/usr/bin/env bash
# The virtual lab's closed loop, measured: configs/lab-incast-dcqcn.cfg (4:1 incast into a 4 Gb/s
# port, DCQCN + PFC) run ROUNDS times for SECONDS each; per round Jain's fairness index of the
# senders' mean DCQCN rates over the last half (cc trace), their total goodput against the
# bottleneck, the switch's drops, its deepest queue and the hosts' PFC-paused share.
# Usage: bench/run-lab.sh [BUILD_DIR] [SECONDS] [ROUNDS]    (figures: docs/performance.md)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
rounds=${3:-3}
tmp=$(mktemp -d /tmp/bench-lab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for ((i = 1; i <= rounds; i++)); do
  (cd "$tmp" && "$OLDPWD/$build/apps/roce-engine" -f "$OLDPWD/configs/lab-incast-dcqcn.cfg" -d "$secs" -q \
    -r report.json >engine.log 2>&1) || { cat "$tmp/engine.log"; exit 1; }
  /usr/bin/python3 - "$tmp" "$i" <<'PY'
import csv, json, sys
d, i = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/report.json"))
rows = [x for x in csv.DictReader(open(d + "/cc-trace.csv")) if x["event"] == "interval"]
t0, t1 = int(rows[0]["time_ns"]), int(rows[-1]["time_ns"])
half = [x for x in rows if int(x["time_ns"]) >= (t0 + t1) // 2]
qps = sorted({x["qp"] for x in half})
means = [sum(float(x["rate_gbps"]) for x in half if x["qp"] == q) / sum(x["qp"] == q for x in half) for q in qps]
jain = sum(means) ** 2 / (len(means) * sum(m * m for m in means))
s = r["switch"]
drops = s["dropped_buffer_full"] + s["dropped_queue_limit"] + s["dropped_headroom"]
s4 = next(p for p in s["ports"] if p["port"] == "s4")
paused = max(p["paused_ns"][3] for p in r["ports"] if p["name"].startswith("h")) / 1e9 / r["duration_s"]
gp = sum(f["goodput_gbps"] for f in r["flows"])
print("round %s: Jain %.4f (rates %s Gb/s), goodput %.3f Gb/s of 4, drops %d, max queue %.0f KB, paused <= %.1f %%"
      % (i, jain, " ".join("%.3f" % m for m in means), gp, drops, s4["max_queue_bytes"][3] / 1024, paused * 100))
print("RESULT bench=lab round=%s jain=%.4f goodput_gbps=%.3f drops=%d" % (i, jain, gp, drops))
PY
done

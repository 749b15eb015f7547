#!/usr/bin/env bash
# The in-process fabric of configs/fabric-leaf-spine-ecmp.cfg (16 hosts, 4 leaves and 2 spines,
# an all-to-all with DCQCN), every link at each of RATES Gb/s, SECONDS a run, its switches on one
# lcore with the hosts (eal.lcores "0-1") or dealt over two (fabric.lcores [1, 2], the NICs'
# roles alternating over them; three lcores on two CPUs: "0@0,1@1,2@0", the main lcore mostly
# asleep). Per run: the goodput, the frames the switches sent per second, the worst link
# direction's time the machine lost (fabric.machine.worst_cpu_lost_share: what the CPU, not the
# network, took), the loop turn's bytes against the smallest ECN/PFC threshold
# (fabric.machine.worst_turn.share), whether the run calls itself machine-limited (lost > 1 % or
# turn share > 0.25) and why, the NICs' mean link use, and the frames dropped.
# Usage: bench/run-fabric.sh [BUILD_DIR] [SECONDS] [RATES]   (default: build 3 "1 2 4";
# figures: docs/performance.md#the-fabric-on-one-lcore-and-on-two)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-3}
rates=${3:-1 2 4}
tmp=$(mktemp -d /tmp/bench-fabric.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
base=configs/fabric-leaf-spine-ecmp.cfg

for gbps in $rates; do
  for layout in one two; do
    sed -e "s/host_gbps = 1.0; uplink_gbps = 1.0;/host_gbps = $gbps; uplink_gbps = $gbps;/" "$base" >"$tmp/run.cfg"
    if [ "$layout" = two ]; then
      sed -i -e 's/lcores = "0-1";/lcores = "0@0,1@1,2@0";/' \
             -e 's/load_balance = "ecmp";/load_balance = "ecmp"; lcores = [1, 2];/' "$tmp/run.cfg"
    fi
    grep -q "host_gbps = $gbps;" "$tmp/run.cfg" || { echo "run-fabric: $base changed: cannot set the rate" >&2; exit 1; }
    (cd "$tmp" && "$OLDPWD/$build/apps/roce-engine" -f run.cfg -d "$secs" -q -r report.json >engine.log 2>&1) ||
      { cat "$tmp/engine.log"; exit 1; }
    /usr/bin/python3 - "$tmp/report.json" "$gbps" "$layout" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gbps, layout = float(sys.argv[2]), sys.argv[3]
fab = r["fabric"]
goodput = sum(f["goodput_gbps"] for f in r["flows"])
sent = sum(p["tx_frames"] for s in fab["switches"] for p in s["ports"])
drops = sum(l[d]["dropped"] or 0 for l in fab["links"] for d in ("a_to_b", "b_to_a"))
m = fab["machine"]
t = m["worst_turn"] or {"loop_turn_us": 0, "share": 0}
nic_util = [l["b_to_a"]["utilization"] for l in fab["links"] if l["tier"] == "host"]
nic_util = sum(nic_util) / len(nic_util)
print("links %4.1f Gb/s, switches on %s lcore(s) %s: goodput %6.2f Gb/s, switches sent %5.2f Mpps, NICs' links %3.0f %%, "
      "worst lost share %5.1f %%, loop turn %5.1f us (share %.2f)%s, drops %d"
      % (gbps, "1" if layout == "one" else "2", fab["lcores"], goodput, sent / r["duration_s"] / 1e6, 100 * nic_util,
         100 * m["worst_cpu_lost_share"], t["loop_turn_us"], t["share"],
         " (machine-limited: %s)" % ", ".join(m["limited_by"]) if m["machine_limited"] else "", drops))
print("RESULT bench=fabric link_gbps=%g switch_lcores=%d goodput_gbps=%.3f switch_mpps=%.3f nic_util=%.3f lost_share=%.4f "
      "turn_us=%.2f turn_share=%.3f machine_limited=%d drops=%d"
      % (gbps, len(fab["lcores"]), goodput, sent / r["duration_s"] / 1e6, nic_util, m["worst_cpu_lost_share"],
         t["loop_turn_us"], t["share"], m["machine_limited"], drops))
PY
  done
done

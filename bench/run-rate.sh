#!/usr/bin/env bash
# Pacing accuracy of one TX lcore on net_null: for several (QPs, rate per QP) points, the rate each
# QP achieved over the run (frame bytes + FCS, as the engine paces) against the configured rate.
# Reports the aggregate error and the worst QP's. The target is 1% at steady state.
# Usage: bench/run-rate.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
tmp=$(mktemp -d /tmp/bench-rate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

run_point() { # qps rate_gbps
  local qps=$1 rate=$2
  cat >"$tmp/r.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "bench-rate-$$"; log_level = "error"; };
ports = ( { name = "n"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1";
            link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "f"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = 1000; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x100000; count = $qps; rate_gbps = $rate; } );
CFG
  "$build/apps/roce-engine" -f "$tmp/r.cfg" -d "$secs" -q -r "$tmp/r.json" >"$tmp/log" 2>&1
  python3 - "$tmp/r.json" "$qps" "$rate" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); qps = int(sys.argv[2]); rate = float(sys.argv[3])
secs = r["duration_s"]
got = [(f["tx_bytes"] + 4 * f["tx_packets"]) * 8 / secs / 1e9 for f in r["flows"]]
agg = sum(got) / (qps * rate) - 1
worst = max(abs(g / rate - 1) for g in got)
print("%7d QPs x %10g Gb/s = %9.3f Gb/s: aggregate %+.3f%%, worst QP %.3f%%" % (qps, rate, qps * rate, agg * 100, worst * 100))
print("RESULT bench=rate qps=%d rate_gbps=%g aggregate_err_pct=%.4f worst_qp_err_pct=%.4f" % (qps, rate, agg * 100, worst * 100))
PY
}

run_point 1 0.001
run_point 1 1
run_point 1 10
run_point 64 0.1
run_point 1024 0.005
run_point 65536 0.00005

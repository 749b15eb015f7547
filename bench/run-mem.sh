#!/usr/bin/env bash
# Memory per QP and of the whole process.
#  (a) per-QP state: sizeof(struct qp_tx) (engine/requester.h) and what a QP has out of line
#      (qp_tx_extra_size: its shapes, RC's message log, its latency state, rounded up to 64
#      bytes), plus its pacing heap slot and, with congestion control, its struct qp_cc; printed
#      by a tiny C program compiled against the engine's headers with the build's own compile
#      flags (build/compile_commands.json). The figure compared with the target is the sending
#      state of a UC 64-byte WRITE QP (one shape) with no latency or cc: struct qp_tx + one shape
#      (+ its heap slot). The receiver's per-QP record (struct rx_qp, one per RX lcore and
#      (port, QPN) seen) is printed too.
#  (b) resident memory of roce-engine with QPS (default 65,536) UC WRITE QPs, DCQCN on, on
#      net_null, one tx lcore: VmRSS and VmHWM of /proc/PID/status near the end of the run.
# Usage: bench/run-mem.sh [BUILD_DIR] [SECONDS] [QPS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-3}
qps=${3:-65536}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-mem: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-mem.XXXXXX)
epid=""
trap '[ -z "$epid" ] || kill -KILL "$epid" 2>/dev/null || true; rm -rf "$tmp" /var/run/dpdk/bench-mem-$$' EXIT

# ---- (a) sizes, from the headers with the build's flags ----------------------------------------
flags=$(python3 - "$build" <<'PY'
import json, shlex, sys, os
b = sys.argv[1]
for e in json.load(open(os.path.join(b, "compile_commands.json"))):
    if e["file"].endswith("engine/requester.c"):
        args = shlex.split(e["command"])[1:]
        out, skip = [], False
        for a in args:
            if skip: skip = False; continue
            if a in ("-o", "-c", "-MF", "-MQ"): skip = True; continue
            if a in ("-MD", "-Werror") or a.endswith(".c"): continue
            # paths are relative to the build directory
            if a.startswith("-I") and not a.startswith("-I/"): a = "-I" + os.path.join(e["directory"], a[2:])
            out.append(a)
        print(" ".join(shlex.quote(a) for a in out)); break
PY
)
cat >"$tmp/sizes.c" <<'C'
#include <stdio.h>
#include "requester.h"
#include "receiver.h"
#include "congestion.h"
#include "lcore.h"
int main(void)
{
	printf("qp_tx=%zu qp_shape=%zu qp_latency=%zu qp_cc=%zu pace_slot=%zu rx_qp=%zu\n", sizeof(struct qp_tx),
	       sizeof(struct qp_shape), sizeof(struct qp_latency), sizeof(struct qp_cc), sizeof(struct pace_slot),
	       sizeof(struct rx_qp));
	return 0;
}
C
eval "cc $flags -o $tmp/sizes $tmp/sizes.c" 2>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; echo "run-mem: could not compile the size probe" >&2; exit 1; }
sizes=$("$tmp/sizes")
eval "$sizes"   # qp_tx=... qp_shape=... (integers)
extra=$(( (qp_shape + 63) / 64 * 64 ))   # qp_tx_extra_size of a UC, one-shape, no-latency group
per_qp=$(( qp_tx + extra ))
per_qp_heap=$(( per_qp + pace_slot ))
per_qp_cc=$(( per_qp_heap + qp_cc ))

# ---- (b) resident memory with QPS QPs -------------------------------------------------------
cat >"$tmp/mem.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 2048; file_prefix = "bench-mem-$$"; log_level = "error"; };
ports = ( { name = "a"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "a"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = 64; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x20000; count = $qps; rate_gbps = 0.01; cc = "dcqcn"; } );
CFG
"$engine" -f "$tmp/mem.cfg" -d "$secs" -q -r "$tmp/mem.json" >"$tmp/engine.log" 2>&1 &
epid=$!
rss=0 hwm=0
t_end=$(( $(date +%s%N) + secs * 1000000000 - 300000000 ))
while kill -0 "$epid" 2>/dev/null && [ "$(date +%s%N)" -lt "$t_end" ]; do
  r=$(awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$epid/status" 2>/dev/null || echo 0)
  h=$(awk '/^VmHWM:/ {print $2 * 1024}' "/proc/$epid/status" 2>/dev/null || echo 0)
  [ -z "$r" ] || rss=$r
  [ -z "$h" ] || hwm=$h
  sleep 0.2
done
wait "$epid" || { cat "$tmp/engine.log" >&2; echo "run-mem: roce-engine failed" >&2; exit 1; }
epid=""
sent=$(python3 -c "import json; r = json.load(open('$tmp/mem.json')); print(r['ports'][0]['tx_packets'])")

mib() { awk -v x="$1" 'BEGIN {printf "%.1f", x / 1048576}'; }
echo "sizes (bytes): $sizes"
echo "per-QP sending state, UC 64-byte WRITE (one shape), no latency, no cc: struct qp_tx $qp_tx + shape $extra = $per_qp"
echo "  + pacing heap slot $pace_slot = $per_qp_heap; + DCQCN's struct qp_cc $qp_cc = $per_qp_cc; receiver record (struct rx_qp) $rx_qp"
echo "target: <= 256 bytes per QP"
echo "roce-engine, $qps QPs, DCQCN, net_null, no hugepages: VmRSS $(mib "$rss") MiB, VmHWM $(mib "$hwm") MiB (eal.memory_mb = 2048; $sent packets sent)"
echo "RESULT bench=mem qp_tx=$qp_tx qp_shape=$qp_shape extra=$extra per_qp_bytes=$per_qp per_qp_with_heap=$per_qp_heap per_qp_with_cc=$per_qp_cc rx_qp=$rx_qp qps=$qps rss_bytes=$rss hwm_bytes=$hwm"

#!/usr/bin/env bash
# Memory per QP and of the whole process.
#  (a) per-QP state, from sizeof() of the engine's structures, printed by a tiny C program compiled
#      against the engine's headers with the build's own compile flags (build/compile_commands.json).
#      A QP's sending state is, since the per-QP state change (docs/performance.md):
#        - its record, struct qp_tx (transport/requester.h): 256 bytes, one per QP in the engine's array;
#        - what it has out of line (qp_tx_extra_size): a struct qp_tx_cold only when its flow is RC,
#          draws sizes or operations, or is Poisson/ON-OFF paced; RC's message log; its latency
#          state when the flow measures latency; rounded up to 64 bytes. A UC fixed-size WRITE QP
#          with one operation, a constant rate and no latency has none (extra=0);
#        - its share of its flow group's struct qp_group_tx (template, shapes, pacing constants:
#          one per group), i.e. that size / the group's QPs (QPS here), rounded to a byte.
#      per_qp_bytes = record + extra + group share is the figure compared with the target. Also
#      printed: + its two pacing slots (struct pace_slot: one in its TX role's heap, one in the
#      role's backlog ring, datapath/pace_queue.h), + DCQCN's struct qp_cc, and the
#      receiver's per-QP record (struct rx_qp, one per RX lcore and (port, QPN) seen).
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
    if e["file"].endswith("datapath/lcore.c"):  # the datapath sees every header the probe needs
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
# link like roce-engine (its static libraries and DPDK's), to ask qp_tx_extra_size itself
libs=$(python3 - "$build" <<'PY'
import os, shlex, sys
b = sys.argv[1]
lines = open(os.path.join(b, "build.ninja")).read().split("\n")
for i, l in enumerate(lines):
    if l.startswith("build apps/roce-engine:"):
        for m in lines[i + 1:i + 6]:
            if m.strip().startswith("LINK_ARGS ="):
                args = shlex.split(m.split("=", 1)[1])
                print(" ".join(shlex.quote(os.path.abspath(os.path.join(b, a)) if a.endswith(".a") and not a.startswith("/") else a) for a in args))
                break
        break
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
	/* the bench's case: a UC group of 64-byte RDMA WRITEs at a constant rate, no latency */
	struct cfg_flow_group g = {.transport = CFG_UC, .msg_size = {.dist = CFG_SIZE_FIXED, .fixed = 64, .min = 64, .max = 64},
				   .ib_mtu = 1024, .pattern = CFG_PATTERN_CONSTANT, .latency = CFG_LAT_OFF, .max_outstanding = 32,
				   .count = 1};

	g.op_weight[CFG_OP_WRITE] = 1;
	printf("extra=%zu group_size=%zu ", qp_tx_extra_size(&g), qp_tx_group_size(&g));
	printf("qp_tx=%zu qp_group_tx=%zu qp_tx_cold=%zu qp_shape=%zu qp_latency=%zu qp_cc=%zu pace_slot=%zu rx_qp=%zu\n",
	       sizeof(struct qp_tx), sizeof(struct qp_group_tx), sizeof(struct qp_tx_cold), sizeof(struct qp_shape),
	       sizeof(struct qp_latency), sizeof(struct qp_cc), sizeof(struct pace_slot), sizeof(struct rx_qp));
	return 0;
}
C
eval "cc $flags -o $tmp/sizes $tmp/sizes.c $libs -lm" 2>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; echo "run-mem: could not compile the size probe" >&2; exit 1; }
sizes=$("$tmp/sizes")
eval "$sizes"   # qp_tx=... qp_shape=... (integers)
# extra: qp_tx_extra_size of that group (no struct qp_tx_cold, no log, no latency state: 0);
# group_size: qp_tx_group_size, shared by the group's QPS QPs
share=$(( (group_size + qps / 2) / qps ))   # the group's shared part over its QPS QPs, to a byte
per_qp=$(( qp_tx + extra + share ))
per_qp_heap=$(( per_qp + 2 * pace_slot ))   # the heap's slot and the backlog's
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
echo "per-QP sending state, UC 64-byte WRITE, no latency, no cc: struct qp_tx $qp_tx + out of line $extra + share of the group's struct qp_group_tx $group_size / $qps QPs ($share) = $per_qp"
echo "  + pacing slots (heap and backlog) 2 x $pace_slot = $per_qp_heap; + DCQCN's struct qp_cc $qp_cc = $per_qp_cc; receiver record (struct rx_qp) $rx_qp"
echo "target: <= 256 bytes per QP"
echo "roce-engine, $qps QPs, DCQCN, net_null, no hugepages: VmRSS $(mib "$rss") MiB, VmHWM $(mib "$hwm") MiB (eal.memory_mb = 2048; $sent packets sent)"
echo "RESULT bench=mem qp_tx=$qp_tx qp_shape=$qp_shape qp_group_tx=$qp_group_tx group_share=$share extra=$extra per_qp_bytes=$per_qp per_qp_with_heap=$per_qp_heap per_qp_with_cc=$per_qp_cc rx_qp=$rx_qp qps=$qps rss_bytes=$rss hwm_bytes=$hwm"

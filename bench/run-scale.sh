#!/usr/bin/env bash
# TX scaling over lcores inside one roce-engine process on this two-core machine: the TX rate of
# one tx lcore against two, 64-byte-payload UC RDMA WRITE ONLY frames (138 bytes, unpaced, as
# bench/run-tx.sh), QPS QPs in all.
#   one lcore:  eal.lcores = "0-1": the main lcore 0 on CPU 0, the tx role on lcore 1 (CPU 1),
#               one net_null port with all QPS QPs (the run-tx.sh set-up).
#   two lcores: eal.lcores = "0@0,1@0,2@1" (an EAL --lcores map, docs/config.md): the main lcore 0
#               and tx lcore 1 share CPU 0 (the main lcore sleeps but for its millisecond ticks),
#               tx lcore 2 runs on CPU 1; each tx lcore has its own net_null port and half the QPs.
# Rate: the report's tx_packets / duration_s, summed over the ports. The main lcore still prints
# its live lines and writes the report in the two-lcore run (it takes its share of CPU 0).
# Usage: [REPEAT=N] bench/run-scale.sh [BUILD_DIR] [SECONDS] [QPS]
# REPEAT (default 3) rounds of one then two lcores; the round with the median ratio is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
qps=${3:-1024}
repeat=${REPEAT:-3}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-scale: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-scale.XXXXXX)
trap 'rm -rf "$tmp" /var/run/dpdk/bench-scale-$$-*' EXIT

port() { # index
  echo "{ name = \"n$1\"; device = \"net_null$1\"; mac = \"02:00:00:00:00:1$1\"; ipv4 = \"192.168.1.1$1\"; link_speed_gbps = 100.0; tx_desc = 1024; }"
}
flow() { # index qps
  echo "{ name = \"w$1\"; port = \"n$1\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"192.168.1.2\"; transport = \"uc\";
          ops = { write = 1; }; message_size = 64; mtu = 1024; qpn = $((0x100 + $1 * 0x10000)); dest_qpn = $((0x100000 + $1 * 0x10000)); count = $2; }"
}
cat >"$tmp/one.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "bench-scale-$$-one"; log_level = "error"; };
ports = ( $(port 0) );
lcores = ( { lcore = 1; port = "n0"; queue = 0; role = "tx"; } );
flows = ( $(flow 0 "$qps") );
CFG
cat >"$tmp/two.cfg" <<CFG
eal = { lcores = "0@0,1@0,2@1"; memory_mb = 1024; file_prefix = "bench-scale-$$-two"; log_level = "error"; };
ports = ( $(port 0), $(port 1) );
lcores = ( { lcore = 1; port = "n0"; queue = 0; role = "tx"; }, { lcore = 2; port = "n1"; queue = 0; role = "tx"; } );
flows = ( $(flow 0 $((qps / 2))), $(flow 1 $((qps - qps / 2))) );
CFG

pps() { python3 -c "import json; r = json.load(open('$tmp/$1.json')); print(round(sum(p['tx_packets'] for p in r['ports']) / r['duration_s']))"; }
per_port() { python3 -c "import json; r = json.load(open('$tmp/$1.json')); print(' + '.join('%.2f' % (p['tx_packets'] / r['duration_s'] / 1e6) for p in r['ports']))"; }
run() { # name
  "$engine" -f "$tmp/$1.cfg" -d "$secs" -q -r "$tmp/$1.json" >"$tmp/$1.log" 2>&1 || { cat "$tmp/$1.log" >&2; exit 1; }
}
: >"$tmp/rounds"
for ((i = 0; i < repeat; i++)); do
  run one
  one=$(pps one)
  run two
  two=$(pps two)
  echo "$one $two $(per_port two)" >>"$tmp/rounds"
done
read -r one two <<<"$(awk '{print $2 / ($1 ? $1 : 1), $0}' "$tmp/rounds" | sort -g |
  awk '{a[NR] = $2 " " $3} END {print a[int((NR + 1) / 2)]}')"
ratio=$(awk -v a="$two" -v b="$one" 'BEGIN {printf "%.3f", b ? a / b : 0}')
awk '{printf "round: one lcore %.2f Mpps, two lcores %.2f Mpps (lcore 1 on CPU 0 with the main lcore %s, lcore 2 on CPU 1 %s), ratio %.3f\n",
  $1 / 1e6, $2 / 1e6, $3, $5, $2 / ($1 ? $1 : 1)}' "$tmp/rounds"
printf '%s QPs, 138-byte frames, %s s each, one process (two lcores: eal.lcores "0@0,1@0,2@1"); CPUs online: %s\n' \
  "$qps" "$secs" "$(nproc)"
printf 'ratio two/one: %s (target >= 1.8)\n' "$ratio"
echo "RESULT bench=scale how=one_process frame=138 qps=$qps one_pps=$one two_pps=$two ratio=$ratio"

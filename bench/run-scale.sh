#!/usr/bin/env bash
# TX scaling over lcores on this two-core machine: the TX rate of one tx lcore against two, each
# sending from its own net_null port (64-byte-payload UC RDMA WRITE ONLY frames, 138 bytes,
# unpaced, as bench/run-tx.sh), QPS QPs in all (split evenly over the two lcores' ports).
# The engine keeps its main lcore (stats, control) apart from the roles and takes its lcores as an
# EAL -l list (eal.lcores; no lcore@cpu mapping, no --lcores), so on two CPUs one process has one
# worker lcore at most. Two TX lcores are therefore two roce-engine processes started together
# (own EAL file prefixes): one polls on lcore 1 (CPU 1, main lcore 0 sleeping on CPU 0), the other
# on lcore 0 (CPU 0, main_lcore = 1 sleeping on CPU 1); each has its own net_null port and half the
# QPs. One TX lcore: one process, the tx role on lcore 1. Rate: tx_packets / duration_s, summed.
# This measures what the TX path scales to with a CPU each (no shared state between the lcores);
# it is not the same as two roles inside one process (which the engine cannot place here).
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
cfg() { # name lcore main_lcore port_index qps
  cat <<CFG
eal = { lcores = "0-1"; main_lcore = $3; memory_mb = 1024; file_prefix = "bench-scale-$$-$1"; log_level = "error"; };
ports = ( $(port "$4") );
lcores = ( { lcore = $2; port = "n$4"; queue = 0; role = "tx"; } );
flows = ( $(flow "$4" "$5") );
CFG
}
cfg one 1 0 0 "$qps" >"$tmp/one.cfg"
cfg two-a 1 0 0 $((qps / 2)) >"$tmp/two-a.cfg"
cfg two-b 0 1 1 $((qps - qps / 2)) >"$tmp/two-b.cfg"

pps() { python3 -c "import json; r = json.load(open('$tmp/$1.json')); print(round(sum(p['tx_packets'] for p in r['ports']) / r['duration_s']))"; }
run() { # name: in the background; its pid in $!
  "$engine" -f "$tmp/$1.cfg" -d "$secs" -q -r "$tmp/$1.json" >"$tmp/$1.log" 2>&1
}
: >"$tmp/rounds"
for ((i = 0; i < repeat; i++)); do
  run one || { cat "$tmp/one.log" >&2; exit 1; }
  one=$(pps one)
  run two-a & pa=$!
  run two-b & pb=$!
  wait "$pa" || { cat "$tmp/two-a.log" >&2; exit 1; }
  wait "$pb" || { cat "$tmp/two-b.log" >&2; exit 1; }
  two=$(( $(pps two-a) + $(pps two-b) ))
  echo "$one $two" >>"$tmp/rounds"
done
read -r one two <<<"$(awk '{print $2 / ($1 ? $1 : 1), $0}' "$tmp/rounds" | sort -g |
  awk '{a[NR] = $2 " " $3} END {print a[int((NR + 1) / 2)]}')"
ratio=$(awk -v a="$two" -v b="$one" 'BEGIN {printf "%.3f", b ? a / b : 0}')
awk '{printf "round: one lcore %.2f Mpps, two lcores %.2f Mpps, ratio %.3f\n", $1 / 1e6, $2 / 1e6, $2 / ($1 ? $1 : 1)}' "$tmp/rounds"
printf '%s QPs, 138-byte frames, %s s each; CPUs online: %s\n' "$qps" "$secs" "$(nproc)"
printf 'ratio two/one: %s (target >= 1.8)\n' "$ratio"
echo "RESULT bench=scale how=two_processes frame=138 qps=$qps one_pps=$one two_pps=$two ratio=$ratio"

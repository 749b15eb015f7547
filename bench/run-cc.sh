#!/usr/bin/env bash
# Cost of DCQCN in the engine's TX path, per packet: the same run with congestion control off and
# on, one worker lcore, QPS UC WRITE QPs (64-byte payload) paced at 10 Mb/s each (far more in
# aggregate than the lcore can send, so pacing is on and every QP is always due).
#   null:   net_null port, no receiver: the reaction point's per-packet work (byte counter) and
#           pacing, no CNP ever arrives.
#   active: a ring pair on the same lcore; one packet in 10 of every QP is marked CE on its way
#           out, the other end's notification point answers with CNPs (4 us spacing) and, with
#           cc on, every QP's reaction point cuts, runs its timers and changes its rate all along.
#           Both runs mark and answer: the difference is the reaction point's cost.
# MARK_EVERY=N marks one packet in N instead (default 10); MODES="active" runs one mode only.
# Both runs of a mode have the same limits: every QP is always due (10 Mb/s each, while the lcore
# gives each of them about 50 kb/s), so pacing never holds a packet back with or without cuts, and
# the figure is per data packet sent by port a.
# Reported: Mpps and ns per packet for each, and the difference (target: <= 10 ns per packet with
# 65,536 QPs, docs/performance.md). Usage: [REPEAT=N] bench/run-cc.sh [BUILD_DIR] [SECONDS] [QPS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
qps=${3:-65536}
repeat=${REPEAT:-3}
tmp=$(mktemp -d /tmp/bench-cc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

config() { # mode(null|active) cc(none|dcqcn)
  local ports roles inject=""
  if [ "$1" = null ]; then
    ports='{ name = "a"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1"; link_speed_gbps = 100.0; }'
    roles='{ lcore = 1; port = "a"; queue = 0; role = "tx"; }'
  else
    ports='{ name = "a"; device = "ring:bcc:a"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1"; link_speed_gbps = 100.0; },
           { name = "b"; device = "ring:bcc:b"; mac = "02:00:00:00:00:02"; ipv4 = "192.168.1.2"; link_speed_gbps = 100.0; }'
    roles='{ lcore = 1; port = "a"; queue = 0; role = "txrx"; }, { lcore = 1; port = "b"; queue = 0; role = "txrx"; }'
    inject="inject = ( { action = \"ce\"; every = ${MARK_EVERY:-10}; } );"
  fi
  cat <<CFG
eal = { lcores = "0-1"; memory_mb = 2048; file_prefix = "bench-cc-$$"; log_level = "error"; };
ports = ( $ports );
lcores = ( $roles );
flows = ( { name = "w"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = 64; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x20000; count = $qps; rate_gbps = 0.01; cc = "$2"; $inject } );
CFG
}

run() { # mode cc -> pps
  config "$1" "$2" >"$tmp/$1-$2.cfg"
  "$build/apps/roce-engine" -f "$tmp/$1-$2.cfg" -d "$secs" -q -r "$tmp/r.json" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  python3 -c "
import json; r = json.load(open('$tmp/r.json')); f = r['flows']
cnp = sum(x.get('cc', {}).get('cnps', 0) for x in f); cuts = sum(x.get('cc', {}).get('cuts', 0) for x in f)
print(round(r['ports'][0]['tx_packets'] / r['duration_s']), cnp, cuts)"
}

for mode in ${MODES:-null active}; do
  : >"$tmp/$mode"
  for ((i = 0; i < repeat; i++)); do
    read -r off c0 _ <<<"$(run "$mode" none)"
    read -r on c1 cuts <<<"$(run "$mode" dcqcn)"
    echo "$off $on $c0 $c1 $cuts" >>"$tmp/$mode"
    awk -v m="$mode" '{printf "round %s: cc off %.2f Mpps, cc on %.2f Mpps (%.2f ns/packet more); CNPs %d / %d, cuts %d\n",
      m, $1 / 1e6, $2 / 1e6, 1e9 / $2 - 1e9 / $1, $3, $4, $5}' <<<"$off $on $c0 $c1 $cuts"
  done
  # the median round by cost
  read -r off on c0 c1 cuts <<<"$(awk '{print 1e9 / $2 - 1e9 / $1, $0}' "$tmp/$mode" | sort -g |
    awk '{a[NR] = $2 " " $3 " " $4 " " $5 " " $6} END {print a[int((NR + 1) / 2)]}')"
  awk -v m="$mode" -v q="$qps" -v off="$off" -v on="$on" -v cuts="$cuts" -v c1="$c1" 'BEGIN {
    printf "%s, %d QPs: cc off %.2f Mpps (%.2f ns/packet), dcqcn %.2f Mpps (%.2f ns/packet): %.2f ns/packet for the reaction point (CNPs %d, cuts %d)\n",
      m, q, off / 1e6, 1e9 / off, on / 1e6, 1e9 / on, 1e9 / on - 1e9 / off, c1, cuts
    printf "RESULT bench=cc mode=%s qps=%d off_pps=%d on_pps=%d ns_per_packet=%.2f\n", m, q, off, on, 1e9 / on - 1e9 / off }'
done

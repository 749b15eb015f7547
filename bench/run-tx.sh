#!/usr/bin/env bash
# Single-lcore TX rate of roce-engine next to dpdk-testpmd, both on net_null, measured in the
# same run: 64-byte-payload UC RDMA WRITE ONLY frames (138 bytes: Ethernet 14, IPv4 20, UDP 8,
# BTH 12, RETH 16, payload 64, ICRC 4) over 1,024 QPs, unpaced (UC: net_null answers nothing; PACED=1
# below: paced), against
# `dpdk-testpmd --forward-mode=txonly --txpkts=138` on the same lcore.
# PAYLOAD=N (default 64, up to 4096) sets the payload: frames of N + 74 bytes on both sides.
# PACED=1: every QP paced (the pacing path: QPs ordered by their next send time) at an unlimited
# rate: rate_gbps = 800 per QP on a port of link_speed_gbps = 800 (the highest the config allows),
# so every QP is always due and the lcore is the limit; the RESULT line gets paced=1.
# Usage: [REPEAT=N] [PAYLOAD=N] [PACED=1] bench/run-tx.sh [BUILD_DIR] [SECONDS] [QPS]
# Each of REPEAT (default 3) rounds runs testpmd then the engine; the round with the median ratio
# is reported, with every round's figures before it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
qps=${3:-1024}
repeat=${REPEAT:-3}
payload=${PAYLOAD:-64}
paced=${PACED:-0}
link_gbps=100.0 rate="" paced_key=""
if [ "$paced" = 1 ]; then link_gbps=800.0 rate="rate_gbps = 800.0;" paced_key=" paced=1"; fi
frame_len=$((payload + 74))
ib_mtu=1024 port_mtu=1500
[ "$payload" -le 1024 ] || { ib_mtu=4096; port_mtu=4200; }
tmp=$(mktemp -d /tmp/bench-tx.XXXXXX)
# testpmd leaves its EAL runtime directory (a tmpfs) behind: remove it with ours
trap 'rm -rf "$tmp" "/var/run/dpdk/bench-tpm-$$"' EXIT

# One round: testpmd, then the engine; prints "testpmd_pps engine_pps frame_bytes".
run_pair() {
  # dpdk-testpmd: mean of the per-second Tx-pps lines after the first
  timeout -s INT $((secs + 3)) dpdk-testpmd -l 0-1 --no-huge -m 1024 --file-prefix "bench-tpm-$$" --no-pci \
    --vdev net_null0 --log-level=error -- --forward-mode=txonly --txpkts=$frame_len --stats-period 1 \
    --nb-cores=1 --total-num-mbufs=16384 --mbuf-size=$((frame_len + 256 > 2176 ? frame_len + 256 : 2176)) >"$tmp/testpmd.log" 2>&1 || true
  testpmd_pps=$(grep -oE 'Tx-pps: +[0-9]+' "$tmp/testpmd.log" | awk '{print $2}' | awk '$1 > 0' | tail -n +2 |
    awk '{s += $1; n++} END {if (n) printf "%.0f", s / n; else print 0}')
  # roce-engine: its report's tx_packets / duration_s
  "$build/apps/roce-engine" -f "$tmp/tx.cfg" -d "$secs" -q -r "$tmp/report.json" >"$tmp/engine.log" 2>&1
  python3 -c "
import json; r = json.load(open('$tmp/report.json')); p = r['ports'][0]
print($testpmd_pps, round(p['tx_packets'] / r['duration_s']), p['tx_bytes'] // max(1, p['tx_packets']))"
}

cat >"$tmp/tx.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "bench-eng-$$"; log_level = "error"; };
ports = ( { name = "n"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1";
            link_speed_gbps = $link_gbps; tx_desc = 1024; mtu = $port_mtu; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = $payload; mtu = $ib_mtu;
            qpn = 0x100; dest_qpn = 0x10000; count = $qps; $rate } );
CFG

# the machine's speed drifts between runs: pairs alternate, and the median ratio is reported
: >"$tmp/pairs"
for ((i = 0; i < repeat; i++)); do
  run_pair >>"$tmp/pairs"
done
read -r testpmd_pps engine_pps frame <<<"$(awk '{print $2 / ($1 ? $1 : 1), $0}' "$tmp/pairs" | sort -g |
  awk '{a[NR] = $2 " " $3 " " $4} END {print a[int((NR + 1) / 2)]}')"
ratio=$(awk -v a="$engine_pps" -v b="$testpmd_pps" 'BEGIN {printf "%.3f", b ? a / b : 0}')
awk '{printf "round: testpmd %.2f Mpps, engine %.2f Mpps, ratio %.3f\n", $1 / 1e6, $2 / 1e6, $2 / ($1 ? $1 : 1)}' "$tmp/pairs"
printf 'frame %s bytes, %s QPs, %s s each, %s\n' "$frame" "$qps" "$secs" \
  "$([ "$paced" = 1 ] && echo "paced at 800 Gb/s per QP (unlimited)" || echo unpaced)"
printf 'dpdk-testpmd txonly: %10.2f Mpps\n' "$(awk -v x="$testpmd_pps" 'BEGIN {print x / 1e6}')"
printf 'roce-engine:         %10.2f Mpps\n' "$(awk -v x="$engine_pps" 'BEGIN {print x / 1e6}')"
printf 'ratio engine/testpmd: %s (target >= 1.0)\n' "$ratio"
echo "RESULT bench=tx frame=$frame qps=$qps testpmd_pps=$testpmd_pps engine_pps=$engine_pps ratio=$ratio$paced_key"

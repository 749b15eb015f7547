#!/usr/bin/env bash
# The lab switch's forwarding rate on one lcore next to `dpdk-testpmd --forward-mode=io`, on the
# same two ports and the same input, in one run:
#   port 0  net_pcap replaying a capture from memory (rx_pcap=FILE,infinite_rx=1: the capture is
#           read once, then each received packet is a copy of the next frame into a fresh mbuf,
#           for both programs alike), so no producer limits the rate;
#   port 1  net_null with no-rx=1: nothing received, and what is sent is freed — the cheapest
#           sink there is, so the sink limits neither (a tx_pcap=/dev/null sink writes every frame
#           through libpcap and holds both near 10 Mpps, hiding the switch's cost).
# testpmd io forwards port 0's frames to port 1 untouched. The engine's switch (role "switch" on
# both ports, one lcore) does per frame what the virtual lab's switch does: parse, classify (DSCP
# -> priority -> class), look up the destination MAC, admit to the shared buffer (egress queue and
# ingress PFC accounting, the MMU), queue for the link delay, mark ECN at dequeue (RED on class 3)
# and send at the port's link rate (100 Gb/s: above what either carries).
# The input is written by the engine itself (a tx role on net_pcap tx_pcap=): QPS UC RDMA WRITE
# ONLY QPs, PAYLOAD bytes each (64: 138-byte frames; above 1,024 a message is several frames), FRAMES
# frames.
# Figures: frames out of port 1 per second — testpmd's Tx-pps of port 1 (mean of its lines after
# the first), the engine's switch port tx_frames / duration_s.
# Usage: [REPEAT=N] [PAYLOAD=N] bench/run-switch.sh [BUILD_DIR] [SECONDS] [QPS] [FRAMES]
# Each of REPEAT (default 3) rounds runs testpmd then the engine; the median-ratio round is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
qps=${3:-256}
frames=${4:-4096}
repeat=${REPEAT:-3}
payload=${PAYLOAD:-64}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-switch: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "run-switch: dpdk-testpmd not found (dpdk package)" >&2; exit 1; }
msgs=$(( (frames + qps - 1) / qps ))
tmp=$(mktemp -d /tmp/bench-switch.XXXXXX)
trap 'rm -rf "$tmp" "/var/run/dpdk/bench-sw-tpm-$$" /var/run/dpdk/bench-sw-$$-*' EXIT

# the input: RoCE data on priority 3 (DSCP 26), to one destination MAC
cat >"$tmp/gen.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 512; file_prefix = "bench-sw-$$-gen"; log_level = "error"; };
ports = ( { name = "n"; device = "net_pcap0"; vdev_args = "tx_pcap=$tmp/in.pcap"; mac = "02:00:00:00:00:01";
            ipv4 = "192.168.1.1"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2"; dscp = 26;
            transport = "uc"; ops = { write = 1; }; message_size = $payload; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x10000; count = $qps; stop = { messages = $msgs; }; } );
CFG
"$engine" -f "$tmp/gen.cfg" -q -r "$tmp/gen.json" >"$tmp/gen.log" 2>&1 || { cat "$tmp/gen.log" >&2; exit 1; }
read -r nframes frame_len < <(python3 -c "
import json; p = json.load(open('$tmp/gen.json'))['ports'][0]; print(p['tx_packets'], p['tx_bytes'] // p['tx_packets'])")
# net_pcap's infinite_rx keeps the whole capture in mbufs of the port's pool, on top of its ring
mbufs=$(( nframes + 16384 ))

cat >"$tmp/switch.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "bench-sw-$$-eng"; log_level = "error"; };
ports = (
  { name = "in"; device = "net_pcap0"; vdev_args = "rx_pcap=$tmp/in.pcap,infinite_rx=1"; mac = "02:00:00:5f:00:00";
    ipv4 = "192.168.1.254"; link_speed_gbps = 100.0; rx_desc = 16384; },
  { name = "out"; device = "net_null0"; vdev_args = "no-rx=1"; mac = "02:00:00:5f:00:01"; ipv4 = "192.168.1.253";
    link_speed_gbps = 100.0; }
);
lcores = ( { lcore = 1; port = "in"; queue = 0; role = "switch"; }, { lcore = 1; port = "out"; queue = 0; role = "switch"; } );
switch = {
  buffer_kb = 2048;
  ecn = ( { tc = 3; kmin_kb = 50; kmax_kb = 200; pmax = 1.0; } );
  fdb = ( { mac = "02:00:00:00:00:02"; port = "out"; } );
};
CFG
"$engine" -f "$tmp/switch.cfg" --check >"$tmp/check.log" 2>&1 || { cat "$tmp/check.log" >&2; exit 1; }

run_pair() { # prints "testpmd_pps engine_pps engine_dropped engine_unknown"
  timeout -s INT $((secs + 3)) dpdk-testpmd -l 0-1 --no-huge -m 1024 --file-prefix "bench-sw-tpm-$$" --no-pci \
    --vdev "net_pcap0,rx_pcap=$tmp/in.pcap,infinite_rx=1" --vdev "net_null0,no-rx=1" --log-level=error -- \
    --forward-mode=io --stats-period 1 --nb-cores=1 --total-num-mbufs=$mbufs >"$tmp/testpmd.log" 2>&1 || true
  "$engine" -f "$tmp/switch.cfg" -d "$secs" -q -r "$tmp/switch.json" >"$tmp/engine.log" 2>&1 ||
    { cat "$tmp/engine.log" >&2; echo "run-switch: roce-engine failed" >&2; exit 1; }
  python3 - "$tmp/testpmd.log" "$tmp/switch.json" <<'PY'
import json, re, sys
# testpmd's periodic statistics: a block per port, "NIC statistics for port N", then Tx-pps
port, tx = None, []
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"NIC statistics for port (\d+)", line)
    if m:
        port = int(m.group(1))
    m = re.search(r"Tx-pps: +(\d+)", line)
    if m and port == 1:
        tx.append(int(m.group(1)))
tx = [x for x in tx if x > 0][1:]
r = json.load(open(sys.argv[2])); s = r["switch"]
out = next(p for p in s["ports"] if p["port"] == "out")
drops = s["dropped_buffer_full"] + s["dropped_queue_limit"] + s["dropped_headroom"]
unknown = sum(p["dropped"].get("unknown_dst", 0) for p in s["ports"])
print(round(sum(tx) / len(tx)) if tx else 0, round(out["tx_frames"] / r["duration_s"]), drops, unknown)
PY
}

: >"$tmp/pairs"
for ((i = 0; i < repeat; i++)); do
  run_pair >>"$tmp/pairs"
done
read -r testpmd_pps engine_pps drops unknown <<<"$(awk '{print $2 / ($1 ? $1 : 1), $0}' "$tmp/pairs" | sort -g |
  awk '{a[NR] = $2 " " $3 " " $4 " " $5} END {print a[int((NR + 1) / 2)]}')"
ratio=$(awk -v a="$engine_pps" -v b="$testpmd_pps" 'BEGIN {printf "%.3f", b ? a / b : 0}')
awk '{printf "round: testpmd io %.2f Mpps, engine switch %.2f Mpps, ratio %.3f\n", $1 / 1e6, $2 / 1e6, $2 / ($1 ? $1 : 1)}' "$tmp/pairs"
printf 'input: %s frames of %s bytes over %s QPs (net_pcap infinite_rx) into net_null (no-rx), %s s each\n' \
  "$nframes" "$frame_len" "$qps" "$secs"
printf 'engine switch: buffer drops %s, unknown destination %s\n' "$drops" "$unknown"
printf 'ratio engine switch / testpmd io: %s (target >= 0.5)\n' "$ratio"
echo "RESULT bench=switch frame=$frame_len qps=$qps frames=$nframes testpmd_pps=$testpmd_pps engine_pps=$engine_pps ratio=$ratio drops=$drops unknown=$unknown"

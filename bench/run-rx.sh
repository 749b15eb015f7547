#!/usr/bin/env bash
# Single-lcore RX rate of roce-engine next to `dpdk-testpmd --forward-mode=rxonly`, on the same
# input: a pcap of valid RoCEv2 frames, replayed from memory in a loop by net_pcap
# (`rx_pcap=FILE,infinite_rx=1`: the capture is read once at start-up, then each received packet
# is a copy of the next frame into a fresh mbuf, for both programs alike), so no producer limits
# the rate. The capture is written by the engine itself (a tx role on net_pcap tx_pcap=): QPS UC
# RDMA WRITE ONLY QPs, 64-byte payload (138-byte frames), a one-way latency probe in each, FRAMES
# frames in all (QPS x FRAMES/QPS messages). The engine's rx role parses every frame, checks its
# ICRC, tracks each QP's PSN (the loop replays PSNs: counted as duplicates) and records the
# one-way time from the probe (`timestamps = "software"`: TSC at RX burst).
# Engine: rx_packets / duration_s of its report; testpmd: mean of its Rx-pps lines after the first.
# SIMD=N passes --force-max-simd-bitwidth=N to the engine's EAL (128: no AVX2 lanes for the ICRC,
# see docs/performance.md "Engine RX rate"); testpmd is left alone.
# Usage: [REPEAT=N] [SIMD=N] bench/run-rx.sh [BUILD_DIR] [SECONDS] [QPS] [FRAMES]
# Each of REPEAT (default 3) rounds runs testpmd then the engine; the median-ratio round is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
qps=${3:-1024}
frames=${4:-4096}
repeat=${REPEAT:-3}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-rx: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
msgs=$(( (frames + qps - 1) / qps ))
tmp=$(mktemp -d /tmp/bench-rx.XXXXXX)
trap 'rm -rf "$tmp" "/var/run/dpdk/bench-rx-tpm-$$" /var/run/dpdk/bench-rx-$$-*' EXIT

# the input: written once by the engine
cat >"$tmp/gen.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 512; file_prefix = "bench-rx-$$-gen"; log_level = "error"; };
ports = ( { name = "n"; device = "net_pcap0"; vdev_args = "tx_pcap=$tmp/in.pcap"; mac = "02:00:00:00:00:01";
            ipv4 = "192.168.1.1"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = 64; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x10000; count = $qps; latency = { mode = "oneway"; };
            stop = { messages = $msgs; }; } );
CFG
"$engine" -f "$tmp/gen.cfg" -q -r "$tmp/gen.json" >"$tmp/gen.log" 2>&1 || { cat "$tmp/gen.log" >&2; exit 1; }
nframes=$(python3 -c "import json; print(json.load(open('$tmp/gen.json'))['ports'][0]['tx_packets'])")
if [ -x "$build/apps/roce-pcap" ]; then
  "$build/apps/roce-pcap" read "$tmp/in.pcap" --quiet >"$tmp/check.log" 2>&1 ||
    { cat "$tmp/check.log" >&2; echo "run-rx: the input capture is not clean" >&2; exit 1; }
fi
# net_pcap's infinite_rx needs the whole capture in mbufs of the port's pool, on top of the ring
mbufs=$(( nframes + 8192 ))

simd_args=""
[ -z "${SIMD:-}" ] || simd_args="extra_args = [\"--force-max-simd-bitwidth=$SIMD\"];"
cat >"$tmp/rx.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "bench-rx-$$-eng"; log_level = "error";
        $simd_args };
ports = ( { name = "r"; device = "net_pcap0"; vdev_args = "rx_pcap=$tmp/in.pcap,infinite_rx=1";
            mac = "02:00:00:00:00:02"; ipv4 = "192.168.1.2"; link_speed_gbps = 100.0;
            timestamps = "software"; rx_desc = 16384; } );
lcores = ( { lcore = 1; port = "r"; queue = 0; role = "rx"; } );
CFG

run_pair() { # prints "testpmd_pps engine_pps dup_fraction latency_samples_fraction"
  timeout -s INT $((secs + 3)) dpdk-testpmd -l 0-1 --no-huge -m 1024 --file-prefix "bench-rx-tpm-$$" --no-pci \
    --vdev "net_pcap0,rx_pcap=$tmp/in.pcap,infinite_rx=1" --log-level=error -- --forward-mode=rxonly \
    --stats-period 1 --nb-cores=1 --total-num-mbufs=$mbufs >"$tmp/testpmd.log" 2>&1 || true
  local tpm
  tpm=$(grep -oE 'Rx-pps: +[0-9]+' "$tmp/testpmd.log" | awk '{print $2}' | awk '$1 > 0' | tail -n +2 |
    awk '{s += $1; n++} END {if (n) printf "%.0f", s / n; else print 0}')
  "$engine" -f "$tmp/rx.cfg" -d "$secs" -q -r "$tmp/rx.json" >"$tmp/engine.log" 2>&1 ||
    { cat "$tmp/engine.log" >&2; echo "run-rx: roce-engine failed" >&2; exit 1; }
  python3 - "$tmp/rx.json" "$tpm" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); p = r["ports"][0]
n = max(1, p["rx_packets"])
lat = p.get("latency_ns", {}).get("oneway", {}).get("count", 0)
bad = p["rx_malformed"] + p["rx_other"]
print(sys.argv[2], round(p["rx_packets"] / r["duration_s"]), bad, round(lat / n, 4))
PY
}

: >"$tmp/pairs"
for ((i = 0; i < repeat; i++)); do
  run_pair >>"$tmp/pairs"
done
read -r testpmd_pps engine_pps bad latfrac <<<"$(awk '{print $2 / ($1 ? $1 : 1), $0}' "$tmp/pairs" | sort -g |
  awk '{a[NR] = $2 " " $3 " " $4 " " $5} END {print a[int((NR + 1) / 2)]}')"
ratio=$(awk -v a="$engine_pps" -v b="$testpmd_pps" 'BEGIN {printf "%.3f", b ? a / b : 0}')
awk '{printf "round: testpmd rxonly %.2f Mpps, engine rx %.2f Mpps, ratio %.3f\n", $1 / 1e6, $2 / 1e6, $2 / ($1 ? $1 : 1)}' "$tmp/pairs"
printf 'input: %s frames of 138 bytes over %s QPs (net_pcap infinite_rx), %s s each\n' "$nframes" "$qps" "$secs"
printf 'engine: malformed+other frames %s, one-way latency samples per frame %s\n' "$bad" "$latfrac"
printf 'ratio engine/testpmd: %s (target >= 0.8)\n' "$ratio"
echo "RESULT bench=rx frame=138 qps=$qps frames=$nframes testpmd_pps=$testpmd_pps engine_pps=$engine_pps ratio=$ratio bad=$bad lat_per_frame=$latfrac"

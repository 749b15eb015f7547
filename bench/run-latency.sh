#!/usr/bin/env bash
# Latency measurement: what it costs per packet, and the round-trip floors, in one run.
#  (a) the cost of stamping and measuring, `latency = { mode = "oneway"; }` against no latency,
#      on 64-byte-payload UC RDMA WRITE ONLY frames (138 bytes), unpaced:
#      (i)  TX only: net_null0, 1,024 QPs, one tx role (as bench/run-tx.sh): Mpps each way and
#           the difference per packet, 1e9/pps_on - 1e9/pps_off (probe written, TSC read);
#      (ii) TX + RX in one process: ring pair a -> b, 64 QPs, the tx role of a and the rx role of
#           b on one lcore, so each packet is sent and received by the same core: the difference
#           per packet covers the probe written, parsed, and recorded in the histograms.
#      REPEAT (default 3) rounds of off then on; the round with the median difference is reported.
#  (b) round-trip floor in one process: ring pair, a txrx (ping-pong QP) + b reflect, lcore 1.
#  (c) round trips across two processes over net_memif: the engine (memif server, ping-pong QP)
#      against dpdk-testpmd --forward-mode=macswap, then against a second roce-engine with only a
#      reflect role, one after the other. Both processes share the machine's two cores.
# Usage: [REPEAT=N] bench/run-latency.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
repeat=${REPEAT:-3}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-latency: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-lat.XXXXXX)
pfx="bench-lat-$$"   # EAL file prefixes: $pfx-<what>; a process that dies leaves /var/run/dpdk/<prefix>
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp" /var/run/dpdk/"$pfx"-* "${XDG_RUNTIME_DIR:-/tmp}"/dpdk/"$pfx"-* 2>/dev/null || true
}
trap cleanup EXIT
ulimit -c 0   # a reflector that crashes on the memif disconnect (see below) leaves no core file

json() { # file, python expression on r (the report)
  python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"
}

# ---- (a) cost of stamping and measuring -------------------------------------------------------

tx_cfg() { # latency group or empty
  cat <<CFG
eal = { lcores = "0-1"; memory_mb = 1024; file_prefix = "$pfx-tx"; log_level = "error"; };
ports = ( { name = "n"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1";
            link_speed_gbps = 100.0; tx_desc = 1024; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = 64; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x10000; count = 1024; $1 } );
CFG
}

txrx_cfg() {
  cat <<CFG
eal = { lcores = "0-1"; memory_mb = 512; file_prefix = "$pfx-txrx"; log_level = "error"; };
ports = ( { name = "a"; device = "ring:blat:a"; mac = "02:00:00:00:00:0a"; ipv4 = "192.168.7.1"; link_speed_gbps = 100.0; },
          { name = "b"; device = "ring:blat:b"; mac = "02:00:00:00:00:0b"; ipv4 = "192.168.7.2"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "a"; role = "tx"; }, { lcore = 1; port = "b"; role = "rx"; } );
flows = ( { name = "w"; port = "a"; dst_mac = "02:00:00:00:00:0b"; dst_ip = "192.168.7.2"; transport = "uc";
            ops = { write = 1; }; message_size = 64; mtu = 1024; qpn = 0x100; dest_qpn = 0x10000; count = 64; $1 } );
CFG
}

oneway='latency = { mode = "oneway"; };'
tx_cfg "" >"$tmp/tx-off.cfg"
tx_cfg "$oneway" >"$tmp/tx-on.cfg"
txrx_cfg "" >"$tmp/txrx-off.cfg"
txrx_cfg "$oneway" >"$tmp/txrx-on.cfg"

run_engine() { # config, report, duration: the engine in the foreground; its output on failure
  "$engine" -f "$1" -d "$3" -q -r "$2" >"$tmp/engine.log" 2>&1 ||
    { cat "$tmp/engine.log" >&2; echo "run-latency: roce-engine -f $1 failed" >&2; exit 1; }
}

: >"$tmp/tx-rounds"
: >"$tmp/txrx-rounds"
for ((i = 0; i < repeat; i++)); do
  # TX only: tx_packets of port n / duration
  for m in off on; do
    run_engine "$tmp/tx-$m.cfg" "$tmp/tx-$m.json" "$secs"
  done
  python3 - "$tmp/tx-off.json" "$tmp/tx-on.json" >>"$tmp/tx-rounds" <<'PY'
import json, sys
print(*(round(r["ports"][0]["tx_packets"] / r["duration_s"]) for r in (json.load(open(f)) for f in sys.argv[1:])))
PY
  # TX + RX: rx_packets of b / duration, rx drops and refused TX bursts of both runs, one-way samples
  for m in off on; do
    run_engine "$tmp/txrx-$m.cfg" "$tmp/txrx-$m.json" "$secs"
  done
  python3 - "$tmp/txrx-off.json" "$tmp/txrx-on.json" >>"$tmp/txrx-rounds" <<'PY'
import json, sys
off, on = (json.load(open(f)) for f in sys.argv[1:])
pps = [round(r["ports"][1]["rx_packets"] / r["duration_s"]) for r in (off, on)]
drops = sum(r["ports"][1]["rx_dropped"] + r["ports"][1]["pmd"]["imissed"] for r in (off, on))
full = sum(r["ports"][0]["tx_queue_full"] for r in (off, on))
print(pps[0], pps[1], drops, full, on["ports"][1].get("latency_ns", {}).get("oneway", {}).get("count", 0))
PY
done
# the round with the median difference: "off_pps on_pps ns_per_packet [rest]"
median_round() {
  awk '{printf "%.3f %s\n", ($2 ? 1e9 / $2 : 0) - ($1 ? 1e9 / $1 : 0), $0}' "$1" | sort -g |
    awk '{a[NR] = $0} END {n = split(a[int((NR + 1) / 2)], f, " "); printf "%s %s %s", f[2], f[3], f[1];
                           for (i = 4; i <= n; i++) printf " %s", f[i]; print ""}'
}
read -r tx_off tx_on tx_ns <<<"$(median_round "$tmp/tx-rounds")"
read -r trx_off trx_on trx_ns trx_drop trx_full trx_meas <<<"$(median_round "$tmp/txrx-rounds")"

# ---- (b) round-trip floor in one process ----------------------------------------------------

cat >"$tmp/ring-pp.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 256; file_prefix = "$pfx-ring"; log_level = "error"; };
ports = ( { name = "a"; device = "ring:blpp:a"; mac = "02:00:00:00:00:0a"; ipv4 = "192.168.7.1"; link_speed_gbps = 100.0; },
          { name = "b"; device = "ring:blpp:b"; mac = "02:00:00:00:00:0b"; ipv4 = "192.168.7.2"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "a"; role = "txrx"; }, { lcore = 1; port = "b"; role = "reflect"; } );
flows = ( { name = "pp"; port = "a"; dst_mac = "02:00:00:00:00:0b"; dst_ip = "192.168.7.2"; transport = "uc";
            ops = { write = 1; }; message_size = 64; qpn = 0x10; dest_qpn = 0x20;
            latency = { mode = "pingpong"; timeout_us = 200000.0; }; } );
CFG
run_engine "$tmp/ring-pp.cfg" "$tmp/ring.json" "$secs"

# "count min p50 p99 p99_9 max sent lost" of the flow's round trips
rtt_fields() {
  json "$1" "' '.join(str(x) for x in [r['flows'][0]['latency_ns']['rtt'][k] for k in ('count', 'min', 'p50', 'p99', 'p99_9', 'max')] + [r['flows'][0]['latency_ns']['pingpong'][k] for k in ('sent', 'lost')])"
}
read -r ring_n ring_min ring_p50 ring_p99 ring_p999 ring_max ring_sent ring_lost <<<"$(rtt_fields "$tmp/ring.json")"

# ---- (c) across two processes over memif ----------------------------------------------------
# The engine (memif server: it makes the socket) starts first, the reflector as soon as the socket
# exists. The engine polls on lcore 1 (CPU 1; its main lcore 0 sleeps); the reflector polls on
# CPU 0 (testpmd: forwarding lcore 0, --main-lcore 1; engine: reflect role on lcore 0,
# main_lcore = 1), so the two busy loops have a core each, and each sleeping main thread shares
# the other's core. The run lasts SECONDS + 2 s (the reflector's start-up is in it).

pinger_cfg() { # socket
  cat <<CFG
eal = { lcores = "0-1"; memory_mb = 256; file_prefix = "$pfx-pinger"; log_level = "error"; };
ports = ( { name = "s"; device = "net_memif0"; vdev_args = "role=server,id=0,socket=$1,socket-abstract=no";
            mac = "02:00:00:00:00:0a"; ipv4 = "192.168.7.1"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "s"; role = "txrx"; } );
flows = ( { name = "pp"; port = "s"; dst_mac = "02:00:00:00:00:0b"; dst_ip = "192.168.7.2"; transport = "uc";
            ops = { write = 1; }; message_size = 64; qpn = 0x10; dest_qpn = 0x20;
            latency = { mode = "pingpong"; timeout_us = 200000.0; }; } );
CFG
}

crash_note=""
# pingpong_over_memif NAME REFLECTOR-COMMAND...: the engine's report in $tmp/pinger-NAME.json
# (not in a subshell: it records the processes it starts for the clean-up)
pingpong_over_memif() {
  local name=$1 sock="$tmp/$1.sock" ppid wpid rpid rc
  shift
  pinger_cfg "$sock" >"$tmp/pinger-$name.cfg"
  "$engine" -f "$tmp/pinger-$name.cfg" -d $((secs + 2)) -q -r "$tmp/pinger-$name.json" >"$tmp/pinger-$name.log" 2>&1 &
  ppid=$!
  pids+=("$ppid")
  for ((w = 0; w < 500; w++)); do
    [ -S "$sock" ] && break
    kill -0 "$ppid" 2>/dev/null || break
    sleep 0.02
  done
  [ -S "$sock" ] || { cat "$tmp/pinger-$name.log" >&2; echo "run-latency: no memif socket from the engine" >&2; exit 1; }
  # in a subshell of its own, so that a crash is reported in its log, not on this terminal
  ( "$@" & echo $! >"$tmp/reflector-$name.pid"; wait $! ) >"$tmp/reflector-$name.log" 2>&1 </dev/null &
  wpid=$!
  pids+=("$wpid")
  while [ ! -s "$tmp/reflector-$name.pid" ]; do sleep 0.01; done
  rpid=$(cat "$tmp/reflector-$name.pid")
  pids+=("$rpid")
  wait "$ppid" || { cat "$tmp/pinger-$name.log" "$tmp/reflector-$name.log" >&2; exit 1; }
  sleep 0.5
  if kill -0 "$rpid" 2>/dev/null; then
    kill -INT "$rpid"
    wait "$wpid" && rc=0 || rc=$?
    [ "$rc" = 0 ] || crash_note+="$name reflector: exit $rc after SIGINT. "
  else
    wait "$wpid" && rc=0 || rc=$?
    # DPDK 22.11's memif PMD unmaps the shared rings on the peer's disconnect while the polling
    # lcore may be inside its RX burst: the reflector can die there (SIGSEGV, 139)
    crash_note+="$name reflector: died with exit $rc when the engine closed memif (before SIGINT). "
  fi
}

tpm_line="testpmd: not installed"
if command -v dpdk-testpmd >/dev/null; then
  pingpong_over_memif testpmd \
    dpdk-testpmd --no-huge -m 512 --file-prefix "$pfx-testpmd" --no-pci -l 0-1 --main-lcore 1 --log-level=error \
    --vdev "net_memif0,role=client,id=0,socket=$tmp/testpmd.sock,socket-abstract=no" -- \
    --forward-mode=macswap --auto-start --stats-period 1 --nb-cores=1 --total-num-mbufs=8192 --no-flush-rx
  read -r tpm_n tpm_min tpm_p50 tpm_p99 tpm_p999 tpm_max tpm_sent tpm_lost <<<"$(rtt_fields "$tmp/pinger-testpmd.json")"
  tpm_line=ok
fi

cat >"$tmp/reflector.cfg" <<CFG
eal = { lcores = "0-1"; main_lcore = 1; memory_mb = 256; file_prefix = "$pfx-reflector"; log_level = "error"; };
ports = ( { name = "r"; device = "net_memif0"; vdev_args = "role=client,id=0,socket=$tmp/engine.sock,socket-abstract=no";
            mac = "02:00:00:00:00:0b"; ipv4 = "192.168.7.2"; link_speed_gbps = 100.0; } );
lcores = ( { lcore = 0; port = "r"; role = "reflect"; } );
CFG
pingpong_over_memif engine "$engine" -f "$tmp/reflector.cfg" -d $((secs + 30)) -q -r "$tmp/reflector.json"
read -r eng_n eng_min eng_p50 eng_p99 eng_p999 eng_max eng_sent eng_lost <<<"$(rtt_fields "$tmp/pinger-engine.json")"

# ---- report -------------------------------------------------------------------------------------

us() { awk -v x="$1" 'BEGIN {printf "%.3f", x / 1000}'; }
mpps() { awk -v x="$1" 'BEGIN {printf "%.2f", x / 1e6}'; }
echo "roce-engine latency bench: 64-byte UC RDMA WRITE ONLY (138-byte frames), $secs s a run, $repeat rounds for (a)"
echo
echo "(a) cost of latency = { mode = \"oneway\"; } per packet (rounds: off Mpps, on Mpps, ns/packet)"
awk '{printf "    tx only round:  %6.2f %6.2f %7.2f\n", $1 / 1e6, $2 / 1e6, 1e9 / $2 - 1e9 / $1}' "$tmp/tx-rounds"
awk '{printf "    tx+rx round:    %6.2f %6.2f %7.2f\n", $1 / 1e6, $2 / 1e6, 1e9 / $2 - 1e9 / $1}' "$tmp/txrx-rounds"
printf '    %-44s %10s %10s %12s\n' "" "off Mpps" "on Mpps" "ns/packet"
printf '    %-44s %10s %10s %12s\n' "TX only, net_null, 1,024 QPs, 1 lcore" "$(mpps "$tx_off")" "$(mpps "$tx_on")" "$tx_ns"
printf '    %-44s %10s %10s %12s\n' "TX+RX, ring pair, 64 QPs, 1 lcore (rx Mpps)" "$(mpps "$trx_off")" "$(mpps "$trx_on")" "$trx_ns"
printf '    TX+RX: rx drops %s, tx ring full %s, one-way samples in the median on-run %s\n' "$trx_drop" "$trx_full" "$trx_meas"
echo
echo "(b)/(c) round trips, ns (ping-pong: one 64-byte message in flight, sent again when it is back)"
printf '    %-46s %10s %8s %8s %8s %8s %8s\n' "" "samples" "lost" "min" "p50" "p99" "p99.9"
printf '    %-46s %10s %8s %8s %8s %8s %8s\n' "(b) ring pair, one process, txrx+reflect lcore 1" \
  "$ring_n" "$ring_lost" "$ring_min" "$ring_p50" "$ring_p99" "$ring_p999"
if [ "$tpm_line" = ok ]; then
  printf '    %-46s %10s %8s %8s %8s %8s %8s\n' "(c) memif -> dpdk-testpmd macswap" \
    "$tpm_n" "$tpm_lost" "$tpm_min" "$tpm_p50" "$tpm_p99" "$tpm_p999"
else
  echo "    (c) memif -> dpdk-testpmd macswap: skipped, dpdk-testpmd not installed"
fi
printf '    %-46s %10s %8s %8s %8s %8s %8s\n' "(c) memif -> roce-engine reflect role" \
  "$eng_n" "$eng_lost" "$eng_min" "$eng_p50" "$eng_p99" "$eng_p999"
echo "    (c): two processes sharing the machine's 2 cores: the engine polls on CPU 1, the reflector on"
echo "    CPU 0; each sleeping main thread shares the other process's polling core."
echo "    (c) varies from run to run with how the two processes' threads land on the two cores."
[ -z "$crash_note" ] || echo "    note: $crash_note"
echo
echo "RESULT bench=latency part=stamp_tx qps=1024 frame=138 off_pps=$tx_off on_pps=$tx_on ns_per_packet=$tx_ns"
echo "RESULT bench=latency part=stamp_txrx qps=64 frame=138 off_pps=$trx_off on_pps=$trx_on ns_per_packet=$trx_ns rx_drops=$trx_drop"
echo "RESULT bench=latency part=rtt_ring samples=$ring_n lost=$ring_lost min_ns=$ring_min p50_ns=$ring_p50 p99_ns=$ring_p99 p99_9_ns=$ring_p999 max_ns=$ring_max"
[ "$tpm_line" != ok ] ||
  echo "RESULT bench=latency part=rtt_memif_testpmd samples=$tpm_n lost=$tpm_lost min_ns=$tpm_min p50_ns=$tpm_p50 p99_ns=$tpm_p99 p99_9_ns=$tpm_p999 max_ns=$tpm_max"
echo "RESULT bench=latency part=rtt_memif_reflect samples=$eng_n lost=$eng_lost min_ns=$eng_min p50_ns=$eng_p50 p99_ns=$eng_p99 p99_9_ns=$eng_p999 max_ns=$eng_max"

#!/usr/bin/env bash
# What a capture keeps up with (docs/monitoring.md, Captures): one lcore sends unpaced UC RDMA
# WRITE ONLY frames to net_null with every frame captured (run.capture, capture_every = 1), so
# its copies come faster than the main lcore can write them; the frames written per second are
# then the writer's rate, and a run sending below it loses nothing. For each payload (64 and
# 1,024 bytes: 138- and 1,098-byte frames) and each snap length (128 bytes, whole frames): the
# engine's TX rate with the capture on, the copies written per second, the share dropped and the
# file's MB/s. The capture file goes to CAPDIR (default /tmp: a disk, not a tmpfs, is the use
# case; several hundred MB a run, removed after it).
# Usage: [CAPDIR=DIR] bench/run-capture.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-3}
engine="$build/apps/roce-engine"
[ -x "$engine" ] || { echo "run-capture: $engine not found (build first: ninja -C $build)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-capture.XXXXXX)
cap=$(mktemp -u "${CAPDIR:-/tmp}/bench-capture-$$.XXXXXX.pcapng")
trap 'rm -rf "$tmp" "$cap"' EXIT

for payload in 64 1024; do
  for snap in 128 0; do
    cat >"$tmp/cap.cfg" <<CFG
eal = { lcores = "0-1"; memory_mb = 512; file_prefix = "bench-cap-$$"; log_level = "error"; };
ports = ( { name = "n"; device = "net_null0"; mac = "02:00:00:00:00:01"; ipv4 = "192.168.1.1";
            link_speed_gbps = 100.0; } );
lcores = ( { lcore = 1; port = "n"; queue = 0; role = "tx"; } );
flows = ( { name = "w"; port = "n"; dst_mac = "02:00:00:00:00:02"; dst_ip = "192.168.1.2";
            transport = "uc"; ops = { write = 1; }; message_size = $payload; mtu = 1024;
            qpn = 0x100; dest_qpn = 0x10000; count = 16; } );
run = { capture = "$cap"; capture_snaplen = $snap; };
CFG
    "$engine" -f "$tmp/cap.cfg" -d "$secs" -q -r "$tmp/report.json" >"$tmp/engine.log" 2>&1 ||
      { cat "$tmp/engine.log" >&2; exit 1; }
    python3 - "$tmp/report.json" "$cap" "$payload" "$snap" <<'PY'
import json, os, sys
rep, cap, payload, snap = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], int(sys.argv[4])
s, c, tx = rep["duration_s"], rep["capture"], rep["ports"][0]["tx_packets"]
print("RESULT bench=capture payload=%s snaplen=%s tx_mpps=%.3f written_mfps=%.3f dropped_pct=%.1f file_mbps=%.0f"
      % (payload, snap or "whole", tx / s / 1e6, c["frames"] / s / 1e6, 100.0 * c["dropped"] / max(1, tx),
         os.path.getsize(cap) / s / 1e6))
PY
    rm -f "$cap"
  done
done

#!/usr/bin/env bash
# The main job (README's first command). Until the engine lands this is the packet self-check:
# install what is missing, build, then build every kind of frame the wire library knows, write
# them to a pcap, read it back with the parser and check every field and every ICRC.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release

out=${1:-results/selfcheck}
mkdir -p "$out"
./build/apps/roce-pcap selfcheck "$out/all-kinds.pcap"
./build/apps/roce-pcap read "$out/all-kinds.pcap" > "$out/all-kinds.txt"
tail -1 "$out/all-kinds.txt"
echo "frames: $out/all-kinds.pcap (open it in Wireshark); decoded: $out/all-kinds.txt"

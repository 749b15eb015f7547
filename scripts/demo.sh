#!/usr/bin/env bash
# The main job (README's first command): install what is missing, build, and run roce-engine on
# its default configuration: two virtual ports joined by a ring pair in one process, an RC WRITE
# group and a UD SEND group, live statistics every second for 10 s, a final summary, and the
# JSON report in results/report.json. No NIC and no hugepages needed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release

mkdir -p results
./build/apps/roce-engine -f configs/default.cfg "$@"
echo "report: $PWD/results/report.json"

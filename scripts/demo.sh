#!/usr/bin/env bash
# The main job (README's first command): install what is missing, build, and run the virtual
# lab's main job (scripts/lab.sh): a closed-loop DCQCN incast through the lab's switch
# (configs/lab-incast-dcqcn.cfg: four senders, one receiver, a shared-buffer switch with ECN and
# PFC, all virtual ports in one process), live statistics every second for 10 s, then the JSON
# report, the traces and PNG plots in results/lab-YYYYmmdd-HHMMSS/, whose path and a summary are
# printed. No NIC and no hugepages needed. Extra arguments go to the engine (demo.sh -d 3).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh release

bash scripts/lab.sh configs/lab-incast-dcqcn.cfg -- "$@"

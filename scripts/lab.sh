#!/usr/bin/env bash
# The virtual lab's main job: runs roce-engine on a lab config (default: the 4:1 DCQCN incast
# through the lab's switch, configs/lab-incast-dcqcn.cfg) in a new results folder
# results/lab-YYYYmmdd-HHMMSS/ with live statistics every second, then plots it
# (scripts/plot-lab.py: rates, queues, CNPs, PFC, summary PNGs; for a fabric config,
# scripts/plot-fabric.py: topology, ECMP groups, links over time) and prints the folder and the
# summary. A roce-ccsim fabric scenario (scenario = "fabric", configs/ccsim/fabric-*.cfg) runs in
# roce-ccsim instead (summary.json, links.csv), plotted by scripts/plot-ccsim-fabric.py; the
# arguments after -- are then roce-ccsim's (e.g. -- --seed 2). It installs and builds nothing: scripts/demo.sh (the README's first command) runs
# scripts/install-deps.sh and scripts/build.sh before it. docs/virtual-lab.md reads the results.
#
# Usage: scripts/lab.sh [CONFIG] [-- ENGINE ARGS...]     e.g. scripts/lab.sh -- -d 3
# Exit status: the engine's when it fails, 1 when the plots fail, 2 on a bad command line.
set -euo pipefail
start=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

usage() { echo "usage: scripts/lab.sh [CONFIG] [-- ENGINE ARGS...]   (default CONFIG: configs/lab-incast-dcqcn.cfg)"; }
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  --) ;;
  -*) usage >&2; echo "lab: engine arguments go after --, e.g. scripts/lab.sh -- -d 3" >&2; exit 2 ;;
esac
config=configs/lab-incast-dcqcn.cfg
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  config=$1
  shift
fi
if [ $# -gt 0 ]; then
  if [ "$1" != "--" ]; then
    usage >&2
    exit 2
  fi
  shift
fi
case $config in # a relative CONFIG: from where the script was called, else from the repository
  /*) ;;
  *) if [ -f "$start/$config" ]; then config=$start/$config; fi ;;
esac
[ -f "$config" ] || { echo "lab: $config: no such config file" >&2; exit 2; }
engine=$repo/build/apps/roce-engine
simulate=false # a roce-ccsim fabric scenario
if grep -qE '^[[:space:]]*scenario[[:space:]]*[=:][[:space:]]*"fabric"' "$config"; then
  simulate=true
  engine=$repo/build/apps/roce-ccsim
fi
[ -x "$engine" ] || { echo "lab: $engine is missing: run scripts/build.sh (or scripts/demo.sh)" >&2; exit 2; }
python=${PYTHON:-/usr/bin/python3} # Debian's, with python3-matplotlib (scripts/install-deps.sh)

stamp=$(date +%Y%m%d-%H%M%S)
out=results/lab-$stamp
n=1
mkdir -p results
while ! mkdir "$out" 2>/dev/null; do # two runs in the same second
  [ "$n" -lt 100 ] || { echo "lab: cannot make $out" >&2; exit 1; }
  n=$((n + 1))
  out=results/lab-$stamp-$n
done
cp "$config" "$out/" # for the record (and plot-lab.py's ECN thresholds)
config=$(realpath "$config") # run in place: its @include files are found beside it

fabric=false # a fabric config: its time series (the links per interval), and plot-fabric.py
if grep -qE '^[[:space:]]*fabric[[:space:]]*[=:]' "$config"; then fabric=true; fi
echo "lab: $config -> $out"
rc=0
if $simulate; then
  (cd "$out" && "$engine" -q -s summary.json -c links.csv "$@" "$config") || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "lab: roce-ccsim failed (exit status $rc); what it wrote is in $repo/$out" >&2
    exit "$rc"
  fi
  "$python" scripts/plot-ccsim-fabric.py "$out" || { echo "lab: plotting failed; the results are in $repo/$out" >&2; exit 1; }
  echo
  echo "lab: results in $repo/$out (summary.json, links.csv, summary.txt, links.png, ecmp.png, flows.png)"
  exit 0
fi
if $fabric; then
  (cd "$out" && "$engine" -f "$config" -r report.json -T timeseries.csv -i 1 "$@") || rc=$?
else
  (cd "$out" && "$engine" -f "$config" -r report.json -i 1 "$@") || rc=$?
fi
if [ "$rc" -ne 0 ]; then
  echo "lab: roce-engine failed (exit status $rc); what it wrote is in $repo/$out" >&2
  exit "$rc"
fi

echo
plot=scripts/plot-lab.py
$fabric && plot=scripts/plot-fabric.py
if ! "$python" "$plot" "$out"; then
  echo "lab: plotting failed; the engine's results are in $repo/$out" >&2
  exit 1
fi
echo
if $fabric; then
  echo "lab: results in $repo/$out (report.json, timeseries.csv, summary.txt, topology.png, ecmp.png, links.png)"
else
  echo "lab: results in $repo/$out (report.json, cc-trace.csv, switch-queues.csv, summary.txt, *.png)"
fi

#!/usr/bin/env bash
# Installs, from Debian 12's archive, whatever the build and the tests need and is missing.
# Run as root. Idempotent: when everything is present it changes nothing and needs no network.
set -euo pipefail

PACKAGES=(
  # build
  gcc meson ninja-build pkg-config
  ccache           # meson compiles through it when present: the test suite's three trees rebuild in seconds
  libdpdk-dev      # DPDK 22.11 LTS (rte_net_crc, ethdev, ...)
  dpdk             # DPDK runtime tools and PMDs
  dpdk-dev         # dpdk-testpmd, the yardstick of the benchmarks in bench/
  libibverbs-dev   # rdma-core, needed by the mlx5 PMD
  libnuma-dev libconfig-dev
  libpcap-dev      # pcap read/write in roce-pcap (and DPDK's net_pcap)
  libjansson-dev   # the JSON report
  nettle-dev       # SHA-256 of the config in the reports' run_info
  zlib1g-dev       # crc32_combine for the ICRC
  libmicrohttpd-dev  # the HTTP exporter: Prometheus /metrics and the live dashboard
  libopenmpi-dev openmpi-bin  # roce-cluster: one test across hosts, launched by mpirun (Open MPI)
  # tests
  clang libclang-rt-14-dev   # libFuzzer, ASan/UBSan with clang
  python3 python3-scapy python3-pytest   # scapy's RoCE layer: an independent ICRC oracle
  tshark                                 # Wireshark's InfiniBand/RoCE, PFC and IP dissectors
  python3-pyelftools                     # dpdk-pmdinfo.py: DPDK's list of its drivers (test oracle)
  python3-matplotlib                     # scripts/plot-ccsim.py (the simulator's and engine's plots)
  python3-prometheus-client              # an independent parser of the exporter's /metrics
  python3-networkx                       # shortest paths: an independent oracle of the fabric routes (tests)
  prometheus                             # a real server scraping the engine in the tests
  chromium                               # the dashboard's test in a headless browser
  elfutils                               # eu-stack: backtraces of a stuck lab process (scripts/lab-multi.py)
)

# npm packages (package-lock.json pins them): the dashboard's chart library (uPlot) and the
# browser driver of its test (playwright-core, which drives Debian's chromium; no browser download)
NPM_FOLDERS=(dashboard tests/browser)

# Node.js and npm: Debian's, unless the machine already has them (for example from NodeSource)
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

# ccache shared by every clone of the project on this machine: the working folder left out of the
# hash and paths made relative, so that a fresh clone elsewhere (the CI's) finds what an earlier
# build compiled
ccache_setup() {
  if command -v ccache >/dev/null 2>&1; then
    ccache --set-config=hash_dir=false
    ccache --set-config=base_dir=/
    ccache --set-config=max_size=5G
  fi
}

npm_install() {
  local d
  for d in "${NPM_FOLDERS[@]}"; do
    if [ ! -d "$d/node_modules" ]; then
      echo "install-deps: npm ci in $d"
      (cd "$d" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    fi
  done
}

cd "$(dirname "$0")/.."
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  ccache_setup
  npm_install
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run this script as root" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
ccache_setup
npm_install
echo "install-deps: done"

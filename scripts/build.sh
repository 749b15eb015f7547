#!/usr/bin/env bash
# Configures (once) and builds the three trees the tests use:
#   build       release, -Werror          the programs users run
#   build-asan  ASan + UBSan (gcc)         unit tests and tools again, catching memory errors
#   build-fuzz  clang + libFuzzer + ASan/UBSan   the fuzz targets
# Usage: scripts/build.sh [release|asan|fuzz|all]   (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."

setup() { # dir, meson options...
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >/dev/null
  fi
  ninja -C "$dir" >/dev/null
}

what=${1:-release}
case $what in
  release|all) setup build ;;&
  asan|all) setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized ;;&
  # (meson puts ccache in front of the compiler it finds, not of one named in CC)
  fuzz|all) CC="$(command -v ccache >/dev/null && echo "ccache clang" || echo clang)" setup build-fuzz -Dfuzzing=true \
              -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized ;;
  release|asan) ;;
  *) echo "usage: $0 [release|asan|fuzz|all]" >&2; exit 2 ;;
esac

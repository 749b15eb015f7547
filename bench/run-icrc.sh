#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: bench/run-icrc.sh [BUILD_DIR] [bench_icrc options...]
#
# Runs bench_icrc once per rte_net_crc implementation (scalar, sse42, avx512; the last with
# --force-max-simd-bitwidth=512, without which DPDK refuses AVX512) and prints one table of
# every point, followed by the machine-readable RESULT / SCALING lines. Extra options (--iters,
# --runs, --payloads) go to every run. BUILD_DIR defaults to ./build.
set -eu

build=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	build=$1
	shift
fi
bin=$build/bench/bench_icrc
if [ ! -x "$bin" ]; then
	echo "run-icrc.sh: $bin not found; build first (ninja -C $build)" >&2
	exit 2
fi

out=$(mktemp "${TMPDIR:-/tmp}/run-icrc.XXXXXX")
trap 'rm -f "$out" "$out".scalar "$out".sse42 "$out".avx512' EXIT INT TERM

echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; $(basename "$bin") $*"
for alg in scalar sse42 avx512; do
	extra=
	[ "$alg" = avx512 ] && extra=--simd512
	# shellcheck disable=SC2086
	"$bin" --alg "$alg" $extra "$@" > "$out.$alg"
	grep '^# rte_net_crc\|^# note' "$out.$alg"
done

echo
header_done=0
for alg in scalar sse42 avx512; do
	if [ $header_done -eq 0 ]; then
		grep '^alg ' "$out.$alg"
		header_done=1
	fi
	grep -E '^(scalar|sse42|avx512) ' "$out.$alg"
done
echo
cat "$out".scalar "$out".sse42 "$out".avx512 | grep -E '^(RESULT|SCALING) '
rm -f "$out".scalar "$out".sse42 "$out".avx512
# bench_icrc's EAL runtime directories (tmpfs) are not removed by EAL itself
rm -rf /var/run/dpdk/bench-icrc-* 2>/dev/null || true

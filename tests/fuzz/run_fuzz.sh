#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: run_fuzz.sh FUZZER CORPUS_DIR [libFuzzer options...]
#        run_fuzz.sh FUZZER --seeds-from PROGRAM [ARGS...] -- [libFuzzer options...]
#
# Runs a libFuzzer target over a copy of CORPUS_DIR (libFuzzer adds new inputs to its first
# corpus directory; the source tree stays untouched), or over seeds that PROGRAM ARGS... DIR
# writes into a fresh temporary DIR: the fuzz_config target's seeds are made from configs/ at each
# run, so that they are always the shipped files (copies kept in the tree drifted from them).
# Exit 0 when the run ends without a finding; otherwise non-zero, with the offending input
# printed in hex and copied to the current directory (crash-*, leak-*, timeout-*, oom-*).
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 FUZZER CORPUS_DIR|--seeds-from PROGRAM [ARGS...] -- [libFuzzer options...]" >&2
	exit 2
fi
fuzzer=$1
case $fuzzer in */*) ;; *) fuzzer=./$fuzzer ;; esac
shift
seeds_from=()
if [ "$1" = --seeds-from ]; then
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		seeds_from+=("$1")
		shift
	done
	if [ $# -eq 0 ] || [ ${#seeds_from[@]} -eq 0 ]; then
		echo "$0: --seeds-from PROGRAM [ARGS...] must end with --" >&2
		exit 2
	fi
	shift
	seeds="${seeds_from[*]}"
else
	seeds=$1
	shift
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/corpus" "$tmp/artifacts"
if [ ${#seeds_from[@]} -gt 0 ]; then
	"${seeds_from[@]}" "$tmp/corpus"
else
	cp "$seeds"/* "$tmp/corpus/"
fi
echo "corpus: $(find "$tmp/corpus" -type f | wc -l) seeds from $seeds"

rc=0
"$fuzzer" -artifact_prefix="$tmp/artifacts/" -print_final_stats=1 "$@" "$tmp/corpus" || rc=$?

found=0
for f in "$tmp"/artifacts/*; do
	[ -e "$f" ] || continue
	found=1
	name=$(basename "$f")
	cp "$f" "./$name"
	echo "FINDING $name ($(wc -c < "$f") bytes), kept as $(pwd)/$name:"
	od -An -tx1 -v "$f"
done
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
	echo "FAIL: $fuzzer exited $rc" >&2
	[ "$rc" -ne 0 ] || rc=1
	exit "$rc"
fi
echo "PASS: no findings"

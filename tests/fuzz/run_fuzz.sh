#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: run_fuzz.sh FUZZER CORPUS_DIR [libFuzzer options...]
#
# Runs a libFuzzer target over a copy of CORPUS_DIR (libFuzzer adds new inputs to its first
# corpus directory; the source tree stays untouched). Exit 0 when the run ends without a
# finding; otherwise non-zero, with the offending input printed in hex and copied to the
# current directory (crash-*, leak-*, timeout-*, oom-*).
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 FUZZER CORPUS_DIR [libFuzzer options...]" >&2
	exit 2
fi
fuzzer=$1
case $fuzzer in */*) ;; *) fuzzer=./$fuzzer ;; esac
seeds=$2
shift 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/corpus" "$tmp/artifacts"
cp "$seeds"/* "$tmp/corpus/"
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

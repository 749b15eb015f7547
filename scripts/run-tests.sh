#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds the release, sanitizer and fuzzing
# trees, runs every test program, and ends with one line "N passed, N failed[, N skipped]"
# counting every test case. Exits non-zero when any case failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/install-deps.sh || exit 1
bash scripts/build.sh all || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
echo "set-up and builds: $SECONDS s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ROCE_SHARED=${ROCE_SHARED:-$ROOT/../shared}

passed=0 failed=0 skipped=0
logdir=$(mktemp -d /tmp/roce-tests.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

# A program using tests/lib/testlib.h: its cases are counted from its RESULT line.
run_cases() { # label, command...
  local label=$1; shift
  local log="$logdir/${label//[^A-Za-z0-9_-]/_}.log" t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  local line p f
  line=$(grep -E '^RESULT .*: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $label: no RESULT line (exit $rc)"; tail -20 "$log"; failed=$((failed + 1)); return
  fi
  p=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")
  f=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed after its last case
  passed=$((passed + p)); failed=$((failed + f))
  echo "$( [ "$f" -eq 0 ] && echo ok || echo FAIL ) $label: $p passed, $f failed ($((SECONDS - t0)) s)"
  [ "$f" -eq 0 ] || grep -E '^(not ok|  )' "$log" | head -40
}

# A command that is one test case: passes when it exits 0.
run_one() { # label, command...
  local label=$1; shift
  local log="$logdir/${label//[^A-Za-z0-9_-]/_}.log" t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "ok $label ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); echo "FAIL $label ($((SECONDS - t0)) s)"; tail -30 "$log"
  fi
}

# pytest: counts parsed from its summary line. PYTEST_MARKS (an env assignment) selects by marker.
run_pytest() { # label, test folder, env assignments...
  local label=$1 folder=$2; shift 2
  local log="$logdir/${label//[^A-Za-z0-9_-]/_}.log" marks="" t0=$SECONDS
  local a
  for a in "$@"; do [[ $a == PYTEST_MARKS=* ]] && marks=${a#PYTEST_MARKS=}; done
  env "$@" /usr/bin/python3 -m pytest -q -rfEs -p no:cacheprovider --durations=12 ${marks:+-m "$marks"} "$folder" >"$log" 2>&1
  local rc=$?
  local summary p f s e
  summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$log" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || true)
  f=$(grep -oE '[0-9]+ failed' <<<"$summary" | grep -oE '[0-9]+' || true)
  s=$(grep -oE '[0-9]+ skipped' <<<"$summary" | grep -oE '[0-9]+' || true)
  e=$(grep -oE '[0-9]+ errors?' <<<"$summary" | grep -oE '[0-9]+' || true)
  p=${p:-0}; f=$(( ${f:-0} + ${e:-0} )); s=${s:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # no tests collected, or pytest crashed
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  echo "$( [ "$f" -eq 0 ] && echo ok || echo FAIL ) $label: $p passed, $f failed, $s skipped ($((SECONDS - t0)) s)"
  [ "$f" -eq 0 ] || grep -E '^(FAILED|ERROR)' "$log" | head -40
  [ "$s" -eq 0 ] || grep -E '^SKIPPED' "$log" | head -10
  grep -E '^[0-9.]+s (call|setup|teardown) ' "$log" | head -12 | sed 's/^/  slowest: /'   # CI's time budget
  [ "$rc" -eq 0 ] || [ -n "$summary" ] || tail -30 "$log"
}

for tree in build build-asan; do
  for t in "$tree"/tests/unit/test_*; do
    [ -f "$t" ] && [ -x "$t" ] && run_cases "$tree/$(basename "$t")" "$t"
  done
  run_one "$tree roce-pcap selfcheck" "$tree/apps/roce-pcap" selfcheck
done

# The fuzz targets' bounded runs are meson tests of the fuzzing tree (tests/fuzz/meson.build).
fuzz_tests=$(meson test -C build-fuzz --list 2>/dev/null | grep -i fuzz | sed -E 's/^.* \/ //')
[ -n "$fuzz_tests" ] || { echo "FAIL no fuzz test found in build-fuzz"; failed=$((failed + 1)); }
while IFS= read -r name; do
  [ -n "$name" ] && run_one "libFuzzer $name" meson test -C build-fuzz --print-errorlogs "$name"
done <<<"$fuzz_tests"

run_pytest "oracle (scapy, tshark, captures) on the ASan build" tests/oracle ROCE_PCAP="$ROOT/build-asan/apps/roce-pcap"
run_pytest "engine on virtual devices (release build)" tests/integration ROCE_ENGINE="$ROOT/build/apps/roce-engine" \
  ROCE_PCAP="$ROOT/build/apps/roce-pcap" ROCE_CCSIM="$ROOT/build/apps/roce-ccsim" ROCE_FABRIC="$ROOT/build/apps/roce-fabric"
run_pytest "engine on virtual devices (ASan + UBSan build)" tests/integration \
  ROCE_ENGINE="$ROOT/build-asan/apps/roce-engine" ROCE_PCAP="$ROOT/build/apps/roce-pcap" \
  ROCE_CCSIM="$ROOT/build-asan/apps/roce-ccsim" ROCE_FABRIC="$ROOT/build-asan/apps/roce-fabric" PYTEST_MARKS="not release_only"

echo "total: $SECONDS s (CI's limit: 1,800 s)"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

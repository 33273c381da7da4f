#!/usr/bin/env bash
# `make fuzz`: every libFuzzer target of build-fuzz/ for FUZZ_SECONDS each, FUZZ_JOBS at a
# time, on the working corpora in build-fuzz/fuzz/work/ (fuzz/run_fuzzer.sh); then one
# summary line per target. With FUZZ_MERGE=1 the inputs that add coverage are merged
# into the checked-in fuzz/corpus/ (review and commit them yourself).
#
#   fuzz/fuzz_all.sh BUILD_DIR    (env: FUZZ_SECONDS=600 FUZZ_JOBS=2 FUZZ_MERGE=0 FUZZ_ONLY=regex)
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-fuzz}"
seconds="${FUZZ_SECONDS:-600}"
jobs="${FUZZ_JOBS:-2}"
only="${FUZZ_ONLY:-.}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export SURGE_FUZZ_ROOT="$PWD"

mapfile -t targets < <(grep -E "$only" "$build/fuzz/targets.txt" | grep -v '^$')
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $jobs at a time"

run_one() {
  read -r binary short dict <<< "$1"
  local work="$build/fuzz/work/$short"
  local args=(--binary "$build/fuzz/$binary" --name "$binary" --corpus "fuzz/corpus/$short"
              --crashes "fuzz/crashes/$short" --work "$work" --seconds "$seconds")
  [ -n "${dict:-}" ] && args+=(--dict "fuzz/dict/$dict")
  mkdir -p "$work"
  if bash fuzz/run_fuzzer.sh "${args[@]}" > "$work/run.log" 2>&1; then
    echo "fuzz: $binary done"
  else
    echo "fuzz: $binary FAILED (see $work/run.log)"
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$build/fuzz/$binary" -merge=1 "fuzz/corpus/$short" "$work/corpus" > "$work/merge.log" 2>&1
  fi
}
export -f run_one
export build seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}

echo "== fuzz summary (${seconds}s each)"
failed=0
for line in "${targets[@]}"; do
  read -r binary short dict <<< "$line"
  work="$build/fuzz/work/$short"
  if [ -f "$work/summary.txt" ]; then cat "$work/summary.txt"; else echo "$binary: no summary"; failed=1; fi
  if grep -aq 'FAILED' "$work/run.log" 2>/dev/null; then
    failed=1
    grep -aE 'FAILED|reproducer saved|it is the seed' "$work/run.log"
  fi
done
exit $failed

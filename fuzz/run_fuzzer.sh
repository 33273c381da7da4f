#!/usr/bin/env bash
# Runs one libFuzzer target the way ctest and `make fuzz` do (fuzz/README.md):
#   1. replays every saved crash reproducer (CRASHES, e.g. fuzz/crashes/X), one by one;
#   2. copies the seeds (CORPUS, e.g. fuzz/corpus/X) into a working corpus under WORK
#      (the checked-in corpus is never written) and fuzzes it for SECONDS; libFuzzer first
#      runs every input of the working corpus once, which replays the seeds. Crash files
#      go to WORK/artifacts/.
# Exits non-zero when any input fails, after printing its path. Writes WORK/summary.txt.
#
#   run_fuzzer.sh --binary B --name N --corpus DIR --crashes DIR --work DIR --seconds S [--dict F]
set -uo pipefail

dict=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2" ;;
    --name) name="$2" ;;
    --corpus) corpus="$2" ;;
    --crashes) crashes="$2" ;;
    --work) work="$2" ;;
    --seconds) seconds="$2" ;;
    --dict) dict="$2" ;;
    *) echo "run_fuzzer.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done

common=(-rss_limit_mb=2048 -timeout=10)
mkdir -p "$work/corpus" "$work/artifacts"
rm -f "$work/summary.txt"

# Inputs in a directory, skipping the notes kept beside them (README*, .gitkeep).
list_inputs() {
  [ -d "$1" ] && find "$1" -type f ! -name 'README*' ! -name '.gitkeep' | sort
}

# 1. Replay. libFuzzer runs each file given by name once and stops at the first failure.
mapfile -t inputs < <(list_inputs "$crashes")
: > "$work/replay.log"
if [ ${#inputs[@]} -gt 0 ]; then
  if ! "$binary" "${common[@]}" "${inputs[@]}" > "$work/replay.log" 2>&1; then
    tail -n 60 "$work/replay.log"
    failed=$(grep -a '^Running: ' "$work/replay.log" | tail -n 1 | sed 's/^Running: //')
    echo "$name: FAILED replaying ${failed:-an input} (log: $work/replay.log)"
    echo "$name replay FAILED on $failed" > "$work/summary.txt"
    exit 1
  fi
  echo "$name: replayed ${#inputs[@]} crash reproducers"
fi

# 2. Fuzz a working copy of the corpus (seeds first, so that each is replayed).
mapfile -t seeds < <(list_inputs "$corpus")
[ ${#seeds[@]} -gt 0 ] && cp "${seeds[@]}" "$work/corpus/"
dict_args=()
[ -n "$dict" ] && dict_args=(-dict="$dict")
touch "$work/.fuzz_start"
"$binary" "${common[@]}" "${dict_args[@]}" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1
rc=$?

# libFuzzer's last status line: "#N DONE cov: C ft: F corp: K/..." (or the line before a crash).
last=$(grep -aE '^#[0-9]+' "$work/fuzz.log" | tail -n 1)
execs=$(grep -aoE 'stat::number_of_executed_units: [0-9]+' "$work/fuzz.log" | grep -oE '[0-9]+$')
cov=$(echo "$last" | grep -aoE 'cov: [0-9]+' | grep -oE '[0-9]+')
ft=$(echo "$last" | grep -aoE 'ft: [0-9]+' | grep -oE '[0-9]+')
corp=$(echo "$last" | grep -aoE 'corp: [0-9]+' | grep -oE '[0-9]+')
mapfile -t new_artifacts < <(find "$work/artifacts" -type f -newer "$work/.fuzz_start")
crashes_found=${#new_artifacts[@]}
echo "$name execs=${execs:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} crashes=$crashes_found seconds=$seconds" \
  | tee "$work/summary.txt"
if [ $rc -ne 0 ]; then
  tail -n 60 "$work/fuzz.log"
  echo "$name: FAILED (exit $rc; log: $work/fuzz.log)"
  for artifact in "${new_artifacts[@]}"; do
    echo "$name: reproducer saved at $artifact"
    sum=$(sha1sum "$artifact" | cut -d' ' -f1)
    for seed in "${seeds[@]}"; do
      [ "$(sha1sum "$seed" | cut -d' ' -f1)" = "$sum" ] && echo "$name: it is the seed $seed"
    done
  done
  [ ${#new_artifacts[@]} -eq 0 ] && grep -aE "Test unit written to" "$work/fuzz.log"
  exit 1
fi
exit 0

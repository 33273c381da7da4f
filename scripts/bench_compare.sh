#!/usr/bin/env bash
# Starts two `surge serve` instances on MODEL_DIR with different flags and runs one
# `surge bench --compare` against both (rounds alternate between them, so a machine
# whose load drifts during the run treats both alike), then stops them.
#   scripts/bench_compare.sh MODEL_DIR OUT_PREFIX "SERVE FLAGS A" "SERVE FLAGS B" "BENCH FLAGS"
# e.g. batching vs one sequence at a time on the 110M Llama of tools/make_tiny_model.py:
#   scripts/bench_compare.sh /tmp/llama110m /tmp/b3 "--max-num-seqs 1" "" "--concurrency 1,8,32 --num-requests 32"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 flags_a=${3:-} flags_b=${4:-} bench_flags=${5:-}
port_a=${PORT:-18123}
port_b=$((port_a + 1))
logs=$(mktemp -d)
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true; rm -rf "$logs"' EXIT

start() {  # PORT FLAGS NAME
  # shellcheck disable=SC2086
  build/surge serve "$model" --host 127.0.0.1 --port "$1" $2 >"$logs/$3.log" 2>&1 &
  pids+=($!)
}
wait_ready() {  # PORT NAME
  for _ in $(seq 1 900); do
    if curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  cat "$logs/$2.log"
  exit 1
}
start "$port_a" "$flags_a" a
start "$port_b" "$flags_b" b
wait_ready "$port_a" a
wait_ready "$port_b" b
# shellcheck disable=SC2086
build/surge bench --compare "http://127.0.0.1:$port_a" "http://127.0.0.1:$port_b" \
  --json "$out.json" --csv "$out.csv" --html "$out.html" $bench_flags

#!/usr/bin/env bash
# Starts two `surge serve` on MODEL_DIR with different flags and runs `surge bench --compare`
# against them (rounds alternate A, B, so machine noise hits both alike), then stops both.
#   scripts/bench_compare.sh MODEL_DIR OUT_PREFIX "SERVE FLAGS A" "SERVE FLAGS B" "BENCH FLAGS"
# Writes OUT_PREFIX.json / .csv / .html and each server's prefix-cache, preemption and spec_decode
# metrics (OUT_PREFIX.metrics_{a,b}.txt).
# Prefix caching on vs off, multi-turn (docs/DECISIONS.md has the numbers; the random-weight
# models of tools/make_tiny_model.py have no chat template, hence the plain one given):
#   S="--quantize int8 --kv-cache-memory 3GiB --chat-template scripts/bench_chat_template.jinja"
#   scripts/bench_compare.sh /tmp/llama110m /tmp/mt "$S" "$S --no-prefix-caching" \
#     "--workload multi-turn --turns 8 --num-requests 64 --concurrency 8 --input-len 64 --output-len 128"
# Two builds side by side: SURGE_A / SURGE_B name the binaries (default build/surge), e.g. the
# same flags on an older checkout's build: SURGE_A=/work/wt-old/build/surge scripts/bench_compare.sh ...
# Batching vs one sequence at a time (issue 3's comparison):
#   scripts/bench_compare.sh /tmp/llama110m /tmp/b3 "--max-num-seqs 1" "" "--concurrency 32 --num-requests 32"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 flags_a=${3:-} flags_b=${4:-} bench_flags=${5:-}
port_a=${PORT:-18123} port_b=$((${PORT:-18123} + 1))
# shellcheck disable=SC2086
${SURGE_A:-build/surge} serve "$model" --host 127.0.0.1 --port "$port_a" $flags_a >"$out.a.log" 2>&1 &
server_a=$!
# shellcheck disable=SC2086
${SURGE_B:-build/surge} serve "$model" --host 127.0.0.1 --port "$port_b" $flags_b >"$out.b.log" 2>&1 &
server_b=$!
trap 'kill -TERM $server_a $server_b 2>/dev/null; wait $server_a $server_b 2>/dev/null || true' EXIT
for port in "$port_a" "$port_b"; do
  for _ in $(seq 1 600); do
    if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
    if ! kill -0 $server_a $server_b 2>/dev/null; then cat "$out.a.log" "$out.b.log"; exit 1; fi
    sleep 0.2
  done
done
# shellcheck disable=SC2086
build/surge bench --compare "http://127.0.0.1:$port_a" "http://127.0.0.1:$port_b" --json "$out.json" \
  --csv "$out.csv" --html "$out.html" $bench_flags
for side in a b; do
  port=$port_a && [ $side = b ] && port=$port_b
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^surge_(prefix_cache|num_preemptions|spec_decode)' >"$out.metrics_$side.txt" || true
done

#!/usr/bin/env bash
# For each KV cache dtype: serve MODEL_DIR with a fixed --kv-cache-memory, run one closed-loop
# `surge bench` round with more requests in flight than any dtype can hold, and report the
# most sequences the engine ran at once (polled from /metrics) next to the bench table.
#   scripts/bench_kv_dtypes.sh MODEL_DIR KV_MEMORY "DTYPES" "BENCH FLAGS"
# e.g. (the numbers in docs/DECISIONS.md, "KV cache dtypes"):
#   scripts/bench_kv_dtypes.sh /tmp/llama110m 128MiB "f32 int8 int4" \
#     "--concurrency 64 --num-requests 64 --input-len 256 --output-len 64"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 kv_memory=$2 dtypes=$3 bench_flags=$4
port=${PORT:-18124}
for dtype in $dtypes; do
  peak=$(mktemp)
  echo 0 >"$peak"
  # Poll the running-batch gauge until the bench is done.
  (
    max=0
    while true; do
      n=$(curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null |
        awk '/^surge_num_requests_running /{print int($2)}') || true
      if [[ -n "${n:-}" && $n -gt $max ]]; then max=$n; echo "$max" >"$peak"; fi
      sleep 0.2
    done
  ) &
  poller=$!
  echo "== kv-cache-dtype $dtype, kv-cache-memory $kv_memory"
  PORT=$port scripts/bench_serving.sh "$model" "/tmp/bench_kv_$dtype" \
    "--kv-cache-dtype $dtype --kv-cache-memory $kv_memory --max-num-seqs 256" "$bench_flags"
  kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null || true
  echo "most sequences running at once: $(cat "$peak")"
  rm -f "$peak"
done

#!/usr/bin/env bash
# Starts `surge serve` on MODEL_DIR, runs one `surge bench` against it, stops the server.
#   scripts/bench_serving.sh MODEL_DIR OUT_PREFIX "SERVE FLAGS" "BENCH FLAGS"
# Writes OUT_PREFIX.json / .csv / .html and prints the bench table. Used for the numbers in
# the issue notes, e.g. the 110M Llama from tools/make_tiny_model.py --preset llama-110m:
#   scripts/bench_serving.sh /tmp/llama110m /tmp/b110 "" "--concurrency 1,8,32 --num-requests 32"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 serve_flags=${3:-} bench_flags=${4:-}
port=${PORT:-18123}
log=$(mktemp)
# shellcheck disable=SC2086
build/surge serve "$model" --host 127.0.0.1 --port "$port" $serve_flags >"$log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$log"; exit 1; fi
  sleep 0.2
done
# shellcheck disable=SC2086
build/surge bench --url "http://127.0.0.1:$port" --json "$out.json" --csv "$out.csv" \
  --html "$out.html" $bench_flags
# The engine's start-up line on the KV cache (dtype, bytes per token, tokens that fit).
grep -m1 "KV cache:" "$log" || true

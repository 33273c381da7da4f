#!/usr/bin/env bash
# Tiered overload: `surge serve` on MODEL_DIR, a closed loop of `batch` requests (concurrency
# 32, beyond --max-num-seqs) and, at the same time, `realtime` requests at 0.5/s; each tier
# is its own `surge bench` run, so each reports its own TTFT. Then the per-tier metrics.
#   scripts/bench_tiers.sh MODEL_DIR OUT_PREFIX "SERVE FLAGS"
# e.g. with "--max-num-seqs 8 --scheduling-policy priority" vs "... fcfs" (docs/DECISIONS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 serve_flags=${3:-}
port=${PORT:-18123}
/usr/bin/python3 scripts/make_tier_datasets.py "$out" 400 40
# shellcheck disable=SC2086
build/surge serve "$model" --host 127.0.0.1 --port "$port" $serve_flags >"$out.serve.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$out.serve.log"; exit 1; fi
  sleep 0.2
done
url=http://127.0.0.1:$port
build/surge bench --url "$url" --workload jsonl --dataset "$out.batch.jsonl" --concurrency 32 --duration 75s \
  --num-requests 400 --json "$out.batch.json" >"$out.batch.txt" 2>&1 &
batch=$!
sleep 5
build/surge bench --url "$url" --workload jsonl --dataset "$out.realtime.jsonl" --request-rate 0.5 \
  --num-requests 30 --seed 3 --json "$out.realtime.json" | tee "$out.realtime.txt"
wait $batch
tail -n 3 "$out.batch.txt"
curl -s "$url/metrics" | grep -E 'tier="(realtime|batch)"' | grep -E '_(sum|count)' | tee "$out.metrics.txt"

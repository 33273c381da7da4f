#!/usr/bin/env bash
# Priority tiers through `surge route` (issue 14's tiers target): 90% batch / 10% realtime
# at overload, on two engines the router spawns from MODEL_DIR, measured twice on fresh
# engines with the same engine flags:
#   tiers: --tiers rt,bulk,bulk — realtime has its own pool (one engine), batch the other;
#   flat:  one pool of both engines, least-load — every request competes with every other.
# Load: a closed loop of batch requests (concurrency 32) and, at the same time, realtime
# requests at 0.5/s; each tier is its own `surge bench` run (the tier rides in the body's
# `priority`), so each reports its own TTFT.
#   scripts/bench_route_tiers.sh MODEL_DIR OUT_PREFIX ["ENGINE FLAGS"]
#   e.g. scripts/bench_route_tiers.sh /tmp/llama110m /tmp/rt "--threads 1 --max-num-seqs 8"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 engine_flags=${3:-"--threads 1 --max-num-seqs 8"}
port=${PORT:-18500}
/usr/bin/python3 scripts/make_tier_datasets.py "$out" 600 40
router=""
trap '[ -n "$router" ] && kill -TERM $router 2>/dev/null; wait 2>/dev/null || true' EXIT
run() {  # NAME ROUTE_FLAGS...
  local name=$1; shift
  # shellcheck disable=SC2086
  build/surge route --host 127.0.0.1 --port "$port" --model "$model" "$@" -- $engine_flags >"$out.$name.route.log" 2>&1 &
  router=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
  local url=http://127.0.0.1:$port
  build/surge bench --url "$url" --model "" --workload jsonl --dataset "$out.batch.jsonl" --concurrency 32 \
    --duration 60s --num-requests 600 --json "$out.$name.batch.json" >"$out.$name.batch.txt" 2>&1 &
  local batch=$!
  sleep 5
  build/surge bench --url "$url" --model "" --workload jsonl --dataset "$out.realtime.jsonl" --request-rate 0.5 \
    --num-requests 25 --seed 3 --json "$out.$name.realtime.json" >"$out.$name.realtime.txt" 2>&1
  wait $batch
  curl -s "$url/metrics" | grep -E '^surge_router_(tier|pool)' >"$out.$name.metrics.txt" || true
  kill -TERM $router; wait $router || true; router=""
}
run tiers --pool rt:spawn=1 --pool bulk:spawn=1 --tiers rt,bulk,bulk
run flat --spawn 2 --policy least-load
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print(f"{'':6} {'realtime P50 TTFT':>18} {'P95 TTFT ms':>12} {'batch out tok/s':>16} {'batch done':>10}")
for name in ("tiers", "flat"):
    rt = json.load(open(f"{out}.{name}.realtime.json"))["rounds"][0]
    b = json.load(open(f"{out}.{name}.batch.json"))["rounds"][0]
    print(f"{name:6} {rt['ttft_ms']['median']:18.1f} {rt['ttft_ms']['p95']:12.1f} {b['output_token_throughput']:16.1f} "
          f"{b['completed']:10d}")
PY

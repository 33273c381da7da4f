#!/usr/bin/env bash
# Routing policies side by side (issue 14's cache-aware target): NUM_ENGINES `surge serve` on
# MODEL_DIR (1 thread each) behind `surge route --policy P`, a shared-prefix workload (many
# groups, long prefixes), for each policy in turn with fresh engines (empty caches). Reports
# P95 TTFT, output tok/s and the engines' summed prefix-cache hit rate (hit tokens / looked-up
# prompt tokens, from their /metrics), and the same workload on ONE engine: the ideal hit rate
# (one cache sees every prefix).
#   scripts/bench_route_policies.sh MODEL_DIR OUT_PREFIX ["POLICIES"] ["BENCH FLAGS"]
# Issue 14's setting (110M model from tools/make_tiny_model.py --preset llama-110m):
#   scripts/bench_route_policies.sh /tmp/llama110m /tmp/policies "cache-aware round-robin least-load" \
#     "--workload shared-prefix --num-groups 64 --prefix-len 1024 --input-len 32 --output-len 32 \
#      --concurrency 32 --num-requests 512"
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 out=$2 policies=${3:-"cache-aware round-robin least-load"}
bench_flags=${4:-"--workload shared-prefix --num-groups 64 --prefix-len 1024 --input-len 32 --output-len 32 --concurrency 32 --num-requests 512"}
num_engines=${NUM_ENGINES:-4} base_port=${PORT:-18400}
engine_flags=${ENGINE_FLAGS:-"--threads 1 --kv-cache-memory 1GiB"}
pids=()
stop_all() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=(); }
trap stop_all EXIT
wait_health() { for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
start_engines() {  # COUNT
  for i in $(seq 0 $(($1 - 1))); do
    # shellcheck disable=SC2086
    build/surge serve "$model" --host 127.0.0.1 --port $((base_port + 1 + i)) $engine_flags >"$out.engine$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 0 $(($1 - 1))); do wait_health $((base_port + 1 + i)); done
}
hit_rate() {  # COUNT -> "hits queried"
  local hits=0 queried=0
  for i in $(seq 0 $(($1 - 1))); do
    m=$(curl -s "http://127.0.0.1:$((base_port + 1 + i))/metrics")
    hits=$((hits + $(echo "$m" | awk '$1=="surge_prefix_cache_hits_total"{printf "%d", $2}')))
    queried=$((queried + $(echo "$m" | awk '$1=="surge_prefix_cache_queries_total"{printf "%d", $2}')))
  done
  echo "$hits $queried"
}
run() {  # NAME URL COUNT
  # shellcheck disable=SC2086
  build/surge bench --url "$2" --json "$out.$1.json" $bench_flags >"$out.$1.txt"
  echo "$1 $(hit_rate "$3")" >>"$out.hits"
}
: >"$out.hits"
for policy in $policies; do
  start_engines "$num_engines"
  backends=()
  for i in $(seq 0 $((num_engines - 1))); do backends+=(--backend "http://127.0.0.1:$((base_port + 1 + i))"); done
  build/surge route --host 127.0.0.1 --port "$base_port" --policy "$policy" "${backends[@]}" >"$out.route.$policy.log" 2>&1 &
  pids+=($!)
  wait_health "$base_port"
  run "$policy" "http://127.0.0.1:$base_port" "$num_engines"
  stop_all
done
start_engines 1
run single "http://127.0.0.1:$((base_port + 1))" 1
stop_all
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print(f"{'policy':12} {'P95 TTFT ms':>12} {'out tok/s':>10} {'hit rate':>9}")
for line in open(f"{out}.hits"):
    name, hits, queried = line.split()
    r = json.load(open(f"{out}.{name}.json"))["rounds"][0]
    rate = int(hits) / max(int(queried), 1)
    print(f"{name:12} {r['ttft_ms']['p95']:12.1f} {r['output_token_throughput']:10.1f} {rate:9.3f}")
PY

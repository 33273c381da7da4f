#!/usr/bin/env bash
# Routing policies side by side (issue 14's cache-aware target): NUM_ENGINES `surge serve` on
# MODEL_DIR (1 thread each) behind `surge route --policy P`, a shared-prefix workload (many
# groups, long prefixes), for each policy in turn with fresh engines (empty caches). Reports
# P95 TTFT, output tok/s and the engines' summed prefix-cache hit rate (hit tokens / looked-up
# prompt tokens, from their /metrics), and the same workload on ONE engine: the ideal hit rate
# (one cache sees every prefix; it gets the KV memory of all NUM_ENGINES together, so that it
# holds what they hold). cache-aware is given --tokenizer MODEL_DIR (the engines' tokenizer) and
# also reports the router's own hit estimate (cached / prompt blocks of what it routed).
# Each engine: ENGINE_FLAGS (default --threads 1) and --kv-cache-memory KV_CACHE_MIB MiB
# (default 2048). The router: ROUTE_FLAGS (default: no first-byte limit, 10 min between
# chunks; the 30 s default idle limit cut 1-thread engines' long prefills mid-stream, whose
# errors then ejected the backends). A run whose bench did not complete every request, or whose hit rate is not
# in [0, 1], fails the script. IDEAL=0 skips the single-engine run.
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
engine_flags=${ENGINE_FLAGS:-"--threads 1"} kv_cache_mib=${KV_CACHE_MIB:-2048}
route_flags=${ROUTE_FLAGS:-"--first-byte-timeout-ms 0 --idle-timeout-ms 600000 --health-timeout-ms 5000"}
pids=()
stop_all() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=(); }
trap stop_all EXIT
wait_health() { for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
start_engines() {  # COUNT KV_MIB
  for i in $(seq 0 $(($1 - 1))); do
    # shellcheck disable=SC2086
    build/surge serve "$model" --host 127.0.0.1 --port $((base_port + 1 + i)) $engine_flags \
      --kv-cache-memory "$2MiB" >"$out.engine$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 0 $(($1 - 1))); do wait_health $((base_port + 1 + i)) || { echo "engine $i did not start" >&2; exit 1; }; done
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
router_estimate() {  # -> "cached_blocks prompt_blocks" of the router on base_port
  curl -s "http://127.0.0.1:$base_port/metrics" | awk '
    $1 ~ /^surge_router_cache_aware_cached_blocks_total/ {c += $2}
    $1 ~ /^surge_router_cache_aware_prompt_blocks_total/ {p += $2}
    END {printf "%d %d", c, p}'
}
run() {  # NAME URL COUNT
  local start=$SECONDS estimate="0 0"
  # shellcheck disable=SC2086
  build/surge bench --url "$2" --json "$out.$1.json" $bench_flags >"$out.$1.txt"
  [ "$1" = cache-aware ] && estimate=$(router_estimate)
  echo "$1 $(hit_rate "$3") $estimate $((SECONDS - start))" >>"$out.hits"
}
: >"$out.hits"
for policy in $policies; do
  start_engines "$num_engines" "$kv_cache_mib"
  backends=()
  for i in $(seq 0 $((num_engines - 1))); do backends+=(--backend "http://127.0.0.1:$((base_port + 1 + i))"); done
  policy_flags=(--policy "$policy")
  [ "$policy" = cache-aware ] && policy_flags+=(--tokenizer "$model")
  # shellcheck disable=SC2086
  build/surge route --host 127.0.0.1 --port "$base_port" "${policy_flags[@]}" $route_flags "${backends[@]}" >"$out.route.$policy.log" 2>&1 &
  pids+=($!)
  wait_health "$base_port" || { echo "surge route --policy $policy did not start: $out.route.$policy.log" >&2; exit 1; }
  run "$policy" "http://127.0.0.1:$base_port" "$num_engines"
  stop_all
done
if [ "${IDEAL:-1}" = 1 ]; then  # IDEAL=0: policies only
  start_engines 1 $((kv_cache_mib * num_engines))
  run single "http://127.0.0.1:$((base_port + 1))" 1
  stop_all
fi
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
ok = True
print(f"{'policy':12} {'P95 TTFT ms':>12} {'P50 TTFT ms':>12} {'out tok/s':>10} {'hit rate':>9} {'router est':>10} "
      f"{'done/asked':>11} {'wall s':>7}")
for line in open(f"{out}.hits"):
    name, hits, queried, cached_blocks, prompt_blocks, wall_s = line.split()
    r = json.load(open(f"{out}.{name}.json"))["rounds"][0]
    rate = int(hits) / max(int(queried), 1)
    estimate = f"{int(cached_blocks) / int(prompt_blocks):10.3f}" if int(prompt_blocks) > 0 else f"{'-':>10}"
    done = f"{r['completed']}/{r['num_requests']}"
    print(f"{name:12} {r['ttft_ms']['p95']:12.1f} {r['ttft_ms']['median']:12.1f} {r['output_token_throughput']:10.1f} "
          f"{rate:9.3f} {estimate} {done:>11} {wall_s:>7}")
    if r["failed"] != 0 or r["completed"] != r["num_requests"] or not 0 <= rate <= 1 or int(queried) == 0:
        print(f"  {name}: NOT SANE (failed {r['failed']}, queried {queried} tokens)", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY

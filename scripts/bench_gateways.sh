#!/usr/bin/env bash
# The same backends behind nginx (plain proxy), sgl-router, vllm-router and surge route, one
# after the other, same workload and client (issue 36; docs/GATEWAYS.md has the table):
#   scripts/bench_gateways.sh overhead|cache|failover|all OUT_PREFIX
# overhead  NUM_BACKENDS instant scripted backends (bench/testing/scripted_server_main.cc, one
#           token; real engines cannot answer 5,000 req/s on a small machine); `surge bench`
#           at each of RATES (default "1000 5000") req/s, constant arrivals, max_tokens 1, for
#           DURATION (10s), directly to one backend and through each gateway (round-robin),
#           ROUNDS (2) passes with the gateways interleaved; added P50/P99 = through a gateway
#           minus direct, same round; gateway CPU per request from /proc (user + system).
# cache     NUM_ENGINES (2) `surge serve CACHE_MODEL` engines (default models/stories260K, so
#           that the routers load its tokenizer.json; 1 thread, KV_CACHE_MIB (6) MiB of KV
#           each, fresh per run) behind each router in its cache-aware mode and round-robin;
#           a multi-tenant shared-prefix workload (scripts/make_zipf_prefix_workload.py:
#           NUM_PROMPTS (32) system prompts, Zipf 1.1 popularity, CACHE_REQUESTS (384) at
#           concurrency 8); the engines' summed prefix-cache hit rate from their /metrics,
#           P95 TTFT, output tok/s.
# failover  NUM_BACKENDS scripted backends answering in ~80 ms (16 tokens, 5 ms apart),
#           scripts/failover_client.py at 100 req/s for 8 s, `kill -9` of backend 1 at 3 s:
#           requests failed, the gateway's own retry counter (its /metrics: the requests
#           that reached the dead backend and went elsewhere), and the last failed request's
#           start after the kill (0: only requests in flight at the kill failed).
# GATEWAYS (default "nginx sgl-router vllm-router surge-route"; nginx takes part in overhead
# and failover only: it has no cache-aware mode). PORT (18600): PORT..PORT+99 are used.
# Routers come from scripts/install_peer_routers.sh; nginx from Debian's package.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/gateways.sh
source scripts/gateways.sh
section=$1 out=$2
gateways=${GATEWAYS:-"nginx sgl-router vllm-router surge-route"}
num_backends=${NUM_BACKENDS:-2} base=${PORT:-18600}
work=$(mktemp -d) pids=()
stop_all() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT
wait_url() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "no answer from $1" >&2; return 1; }
backend_urls() { for i in $(seq 1 "$num_backends"); do echo "http://127.0.0.1:$((base + i))"; done; }
start_scripted() {  # FLAGS...: NUM_BACKENDS scripted servers on PORT+1..
  for i in $(seq 1 "$num_backends"); do
    build/bench/loadgen_scripted_server --port $((base + i)) "$@" </dev/zero >"$work/backend$i.log" 2>&1 &
    pids+=($!)
  done
  for url in $(backend_urls); do wait_url "$url/health"; done
}
gateway_port() {  # NAME -> its port
  case "$1" in nginx) echo $((base + 10));; sgl-router) echo $((base + 11));; vllm-router) echo $((base + 12));;
    surge-route) echo $((base + 13));; esac
}
start_one() {  # NAME POLICY URL...: starts it on its port, waits for it, records its PID
  local name=$1 port; port=$(gateway_port "$1")
  start_gateway "$name" "$2" "$port" "$work/$name" "${@:3}"
  pids+=("$gw_pid"); eval "pid_${name//-/_}=$gw_pid"
  wait_url "http://127.0.0.1:$port/v1/models" || { tail -5 "$work/$name/"*.log >&2; exit 1; }
}

overhead() {
  local rates=${RATES:-"1000 5000"} duration=${DURATION:-10s} rounds=${ROUNDS:-2} urls port pid t0 rate round g
  start_scripted --num-tokens 1
  mapfile -t urls < <(backend_urls)
  for g in $gateways; do start_one "$g" round-robin "${urls[@]}"; done
  : >"$out.overhead.cpu"
  for rate in $rates; do for round in $(seq 1 "$rounds"); do for g in direct $gateways; do
    port=$((base + 1)) pid=""
    [ "$g" != direct ] && { port=$(gateway_port "$g"); pid_var="pid_${g//-/_}"; pid=${!pid_var}; }
    t0=$([ -n "$pid" ] && cpu_ticks "$pid" || echo 0)
    build/surge bench --url "http://127.0.0.1:$port" --model scripted-model --request-rate "$rate" --arrival constant \
      --duration "$duration" --input-len 16 --output-len 1 --calibrate=false --timeout 10s \
      --json "$out.overhead.$rate.$round.$g.json" >"$out.overhead.$rate.$round.$g.txt"
    echo "$rate $round $g $(( $([ -n "$pid" ] && cpu_ticks "$pid" || echo 0) - t0 ))" >>"$out.overhead.cpu"
  done; done; done
  stop_all
  /usr/bin/python3 - "$out" "$(getconf CLK_TCK)" <<'PY'
import collections, json, statistics, sys
out, tck = sys.argv[1], int(sys.argv[2])
runs = collections.defaultdict(list)  # (rate, name) -> [(round, round json, ticks)]
for line in open(f"{out}.overhead.cpu"):
    rate, rnd, name, ticks = line.split()
    r = json.load(open(f"{out}.overhead.{rate}.{rnd}.{name}.json"))["rounds"][0]
    runs[(int(rate), name)].append((rnd, r, int(ticks)))
added = {}
for rate in sorted({k[0] for k in runs}):
    print(f"\n{rate} req/s target, max_tokens 1; E2E ms, mean over rounds; added = gateway - direct, same round")
    print(f"{'gateway':12} {'p50':>7} {'p99':>7} {'+p50':>7} {'+p99':>7} {'cpu us/req':>10} {'req/s':>7} {'done':>7} {'failed':>6}")
    direct = {rnd: r for rnd, r, _ in runs[(rate, "direct")]}
    for (rt, name), rows in runs.items():
        if rt != rate: continue
        mean = lambda f: statistics.mean(f(rnd, r) for rnd, r, _ in rows)
        p50, p99 = mean(lambda n, r: r["e2e_latency_ms"]["median"]), mean(lambda n, r: r["e2e_latency_ms"]["p99"])
        a50 = mean(lambda n, r: r["e2e_latency_ms"]["median"] - direct[n]["e2e_latency_ms"]["median"])
        a99 = mean(lambda n, r: r["e2e_latency_ms"]["p99"] - direct[n]["e2e_latency_ms"]["p99"])
        done = sum(r["completed"] for _, r, _ in rows)
        cpu = "-" if name == "direct" else f"{sum(t for *_, t in rows) * 1e6 / tck / max(done, 1):.1f}"
        added[(rate, name)] = (a50, a99)
        print(f"{name:12} {p50:7.3f} {p99:7.3f} {a50:7.3f} {a99:7.3f} {cpu:>10} {mean(lambda n, r: r['request_throughput']):7.0f} "
              f"{done:7d} {sum(r['failed'] for _, r, _ in rows):6d}")
    s = added.get((rate, "surge-route"))
    for peer, k, what in (("sgl-router", 1, "added p99"), ("nginx", 0, "added p50")):
        if s and (rate, peer) in added and added[(rate, peer)][k] > 0:
            print(f"surge-route / {peer} {what}: {s[k] / added[(rate, peer)][k]:.2f}")
PY
}

cache() {
  local model=${CACHE_MODEL:-models/stories260K} g policy format urls hits queried i m
  .venv/bin/python scripts/make_zipf_prefix_workload.py "$work/zipf.jsonl" "$(basename "$model")" \
    --num-prompts "${NUM_PROMPTS:-32}" --prefix-words 60 --num-requests "${CACHE_REQUESTS:-384}"
  : >"$out.cache.hits"
  for g in $gateways; do
    [ "$g" = nginx ] && continue
    for policy in cache-aware round-robin; do
      format=sgl-router; [ "$g" = vllm-router ] && format=vllm-router
      for i in $(seq 1 "$num_backends"); do
        build/surge serve "$model" --host 127.0.0.1 --port $((base + i)) --threads 1 --kv-cache-memory "${KV_CACHE_MIB:-6}MiB" \
          --get-load-format "$format" >"$work/engine$i.log" 2>&1 &
        pids+=($!)
      done
      mapfile -t urls < <(backend_urls)
      for url in "${urls[@]}"; do wait_url "$url/health"; done
      SURGE_ROUTE_FLAGS="--tokenizer $model" start_one "$g" "$policy" "${urls[@]}"
      build/surge bench --url "http://127.0.0.1:$(gateway_port "$g")" --workload jsonl --dataset "$work/zipf.jsonl" \
        --concurrency 8 --num-requests "${CACHE_REQUESTS:-384}" --calibrate=false --timeout 120s \
        --json "$out.cache.$g.$policy.json" >"$out.cache.$g.$policy.txt"
      hits=0 queried=0
      for url in "${urls[@]}"; do
        m=$(curl -s "$url/metrics")
        hits=$((hits + $(echo "$m" | awk '$1=="surge_prefix_cache_hits_total"{printf "%d", $2}')))
        queried=$((queried + $(echo "$m" | awk '$1=="surge_prefix_cache_queries_total"{printf "%d", $2}')))
      done
      echo "$g $policy $hits $queried" >>"$out.cache.hits"
      stop_all
    done
  done
  /usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print(f"\n{'gateway':12} {'policy':12} {'hit rate':>8} {'P95 TTFT ms':>11} {'out tok/s':>9} {'done':>5} {'failed':>6}")
rates = {}
for line in open(f"{out}.cache.hits"):
    g, policy, hits, queried = line.split()
    r = json.load(open(f"{out}.cache.{g}.{policy}.json"))["rounds"][0]
    rates[(g, policy)] = int(hits) / max(int(queried), 1)
    print(f"{g:12} {policy:12} {rates[(g, policy)]:8.3f} {r['ttft_ms']['p95']:11.1f} {r['output_token_throughput']:9.1f} "
          f"{r['completed']:5d} {r['failed']:6d}")
if ("surge-route", "cache-aware") in rates and ("sgl-router", "cache-aware") in rates:
    print("surge-route - sgl-router cache-aware hit rate: %+.1f points" %
          (100 * (rates[("surge-route", "cache-aware")] - rates[("sgl-router", "cache-aware")])))
PY
}

failover() {
  local g urls victim port metrics retries
  : >"$out.failover"
  for g in $gateways; do
    start_scripted --num-tokens 16 --itl-ms 5
    victim=${pids[0]}
    mapfile -t urls < <(backend_urls)
    start_one "$g" round-robin "${urls[@]}"
    port=$(gateway_port "$g")
    /usr/bin/python3 scripts/failover_client.py "http://127.0.0.1:$port" scripted-model "$victim" >"$out.failover.$g.json"
    metrics=""
    case "$g" in surge-route) metrics=$(curl -s "http://127.0.0.1:$port/metrics");;
      sgl-router|vllm-router) metrics=$(curl -s "http://127.0.0.1:$((port + 50))/metrics");; esac
    echo "$metrics" | awk '$1 ~ /retr/ && $1 ~ /_total/ && $1 !~ /^#/' >"$out.failover.$g.retries"
    retries=$(awk '{s += $2; n++} END {print n ? s : "-"}' "$out.failover.$g.retries")
    echo "$g $retries" >>"$out.failover"
    stop_all
  done
  /usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print(f"\nkill -9 of backend 1 of 2 at 3 s, 100 req/s non-streaming for 8 s")
print(f"{'gateway':12} {'sent':>5} {'failed':>6} {'retries':>7} {'last failure s':>14}")
for line in open(f"{out}.failover"):
    g, retries = line.split()
    r = json.load(open(f"{out}.failover.{g}.json"))
    print(f"{g:12} {r['sent']:5d} {r['failed']:6d} {retries:>7} {r['last_failure_s']:14.3f}")
PY
}

echo "loadavg before: $(cat /proc/loadavg)"
case "$section" in
  overhead|cache|failover) "$section" ;;
  all) overhead; cache; failover ;;
  *) echo "bench_gateways: unknown section '$section' (overhead, cache, failover, all)" >&2; exit 2 ;;
esac
echo "loadavg after: $(cat /proc/loadavg)"

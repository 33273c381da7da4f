#!/usr/bin/env bash
# The gateway's added latency, side by side with nginx as a plain reverse proxy (issue 14's
# overhead target). One instant scripted backend (bench/testing/scripted_server_main.cc: one
# token, no delay); in front of it nginx (keep-alive upstream, no buffering) and `surge route`;
# `surge bench` sends the same constant-rate workload directly, through nginx, through surge
# route. Added latency = a percentile of E2E through a proxy minus the same percentile direct.
#   scripts/bench_route_overhead.sh OUT_PREFIX [RATE] [DURATION]      (defaults 5000, 10s)
# Writes OUT_PREFIX.{direct,nginx,route}.json and prints the table. Installs Debian's nginx if absent.
# SURGE=/path/to/surge: the binary under test (default build/surge).
# ROUTE_BASELINE=/path/to/an/older/surge: a second `surge route` (that binary) in front of the
# same backend, and ROUNDS (default 3) rounds of direct, baseline, route (OUT_PREFIX.
# {direct,base,route}N.json; added = against the same round's direct run): a before/after
# ratio of the medians over rounds, measured side by side.
# scripts/bench_gateways.sh overhead measures sgl-router and vllm-router beside these.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 rate=${2:-5000} duration=${3:-10s}
surge=${SURGE:-build/surge}  # the surge route under test (and the load generator)
port_backend=${PORT:-18300} port_nginx=$((${PORT:-18300} + 1)) port_route=$((${PORT:-18300} + 2))
# shellcheck source=scripts/gateways.sh
source scripts/gateways.sh
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
build/bench/loadgen_scripted_server --port "$port_backend" --num-tokens 1 </dev/zero >"$out.backend.log" 2>&1 &
pids+=($!)
start_nginx "$port_nginx" "$work/nginx" "http://127.0.0.1:$port_backend"
pids+=("$gw_pid")
for _ in $(seq 1 100); do curl -s "http://127.0.0.1:$port_backend/v1/models" >/dev/null 2>&1 && break; sleep 0.1; done
route_flags=()
if ! curl -sf "http://127.0.0.1:$port_backend/health" >/dev/null; then
  # A scripted server built before it answered GET /health: surge route would mark it unhealthy
  # after two checks and answer 503. The checks still run; they just never take it out.
  echo "note: $(realpath build/bench/loadgen_scripted_server) has no /health (rebuild it); surge route runs with --unhealthy-threshold 1000000" >&2
  route_flags=(--unhealthy-threshold 1000000)
fi
"$surge" route --host 127.0.0.1 --port "$port_route" --backend "http://127.0.0.1:$port_backend" \
  --policy round-robin "${route_flags[@]}" >"$out.route.log" 2>&1 &
pids+=($!)
route_pid=$! base_pid=""
ports=("$port_backend" "$port_nginx" "$port_route")
port_base=$((port_route + 1))
if [ -n "${ROUTE_BASELINE:-}" ]; then
  "$ROUTE_BASELINE" route --host 127.0.0.1 --port "$port_base" --backend "http://127.0.0.1:$port_backend" \
    --policy round-robin "${route_flags[@]}" >"$out.base.log" 2>&1 &
  pids+=($!)
  base_pid=$!
  ports+=("$port_base")
fi
for port in "${ports[@]}"; do
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
    sleep 0.1
  done
done
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system, in clock ticks
bench() {  # NAME PORT [ROUTER_PID: its CPU time over the run goes to OUT_PREFIX.NAME.cpu_s]
  local before=0
  [ -n "${3:-}" ] && before=$(cpu_ticks "$3")
  "$surge" bench --url "http://127.0.0.1:$2" --model scripted-model --request-rate "$rate" --arrival constant \
    --duration "$duration" --input-len 16 --output-len 1 --calibrate=false --timeout 10s \
    --json "$out.$1.json" >"$out.$1.txt"
  if [ -n "${3:-}" ]; then
    awk -v a="$before" -v b="$(cpu_ticks "$3")" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f\n", (b - a) / hz }' \
      >"$out.$1.cpu_s"
  fi
}
bench direct "$port_backend"
bench nginx "$port_nginx"
bench route "$port_route" "$route_pid"
if [ -n "${ROUTE_BASELINE:-}" ]; then
  for round in $(seq 1 "${ROUNDS:-3}"); do
    bench "direct$round" "$port_backend"
    bench "base$round" "$port_base" "$base_pid"
    bench "route$round" "$port_route" "$route_pid"
  done
fi
/usr/bin/python3 - "$out" "$rate" "${ROUTE_BASELINE:+${ROUNDS:-3}}" <<'PY'
import json, statistics, sys
out, rate = sys.argv[1], float(sys.argv[2])
num_rounds = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else 0
keys = ("mean", "median", "p95", "p99")  # surge bench names the p50 "median"
rounds = {name: json.load(open(f"{out}.{name}.json"))["rounds"][0] for name in ("direct", "nginx", "route")}
e2e = {name: r["e2e_latency_ms"] for name, r in rounds.items()}
d = e2e["direct"]
print(f"target {rate:.0f} req/s; E2E ms; added = proxy - direct, percentile by percentile")
print(f"{'':12} {'mean':>8} {'p50':>8} {'p95':>8} {'p99':>8} {'req/s':>8} {'done':>7} {'failed':>6}")
for name, r in rounds.items():
    m = e2e[name]
    print(f"{name:12} " + " ".join(f"{m[k]:8.3f}" for k in keys) +
          f" {r['request_throughput']:8.0f} {r['completed']:7d} {r['failed']:6d}")
for name in ("nginx", "route"):
    m = e2e[name]
    print(f"added {name:6} " + " ".join(f"{m[k] - d[k]:8.3f}" for k in keys))
n, r = e2e["nginx"], e2e["route"]
if n["p99"] - d["p99"] > 0:
    print("route/nginx added p99 ratio: %.2f" % ((r["p99"] - d["p99"]) / (n["p99"] - d["p99"])))
else:
    print("route/nginx added p99 ratio: undefined (nginx's added p99 is <= 0: within the noise)")
ok = True
for name, run in rounds.items():
    if run["failed"] != 0 or run["completed"] == 0:
        print(f"{name}: {run['failed']} failed, {run['completed']} completed: NOT SANE", file=sys.stderr); ok = False
    if run["request_throughput"] < 0.95 * rate:
        print(f"{name}: achieved {run['request_throughput']:.0f} req/s, under 95% of {rate:.0f}: the load generator "
              "(or this machine) could not drive the target rate", file=sys.stderr)
if num_rounds:
    print(f"before/after: direct, baseline route (ROUTE_BASELINE), route; {num_rounds} rounds; "
          "added ms = E2E minus the same round's direct")
    added = {"base": {k: [] for k in keys}, "route": {k: [] for k in keys}}
    cpu_us = {"base": [], "route": []}  # router CPU (user + system) per completed request
    for i in range(1, num_rounds + 1):
        d = json.load(open(f"{out}.direct{i}.json"))["rounds"][0]["e2e_latency_ms"]
        for name in ("base", "route"):
            run = json.load(open(f"{out}.{name}{i}.json"))["rounds"][0]
            m = run["e2e_latency_ms"]
            for k in keys: added[name][k].append(m[k] - d[k])
            cpu_us[name].append(1e6 * float(open(f"{out}.{name}{i}.cpu_s").read()) / max(run["completed"], 1))
            print(f"{name}{i:<8} " + " ".join(f"{m[k] - d[k]:8.3f}" for k in keys) +
                  f" {run['request_throughput']:8.0f} {run['completed']:7d} {run['failed']:6d}"
                  f"  router CPU {cpu_us[name][-1]:6.1f} us/request")
            if run["failed"] != 0: ok = False
    med = {name: {k: statistics.median(v) for k, v in a.items()} for name, a in added.items()}
    for name in ("base", "route"):
        print(f"median {name:5} " + " ".join(f"{med[name][k]:8.3f}" for k in keys) +
              f"  router CPU {statistics.median(cpu_us[name]):6.1f} us/request")
    print(f"route/baseline router CPU per request ratio: "
          f"{statistics.median(cpu_us['route']) / statistics.median(cpu_us['base']):.2f}")
    for k in ("median", "p99"):
        if med["base"][k] > 0:
            print(f"route/baseline added {k} ratio: {med['route'][k] / med['base'][k]:.2f}")
sys.exit(0 if ok else 1)
PY

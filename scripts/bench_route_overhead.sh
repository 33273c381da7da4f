#!/usr/bin/env bash
# The gateway's added latency, side by side with nginx as a plain reverse proxy (issue 14's
# overhead target). One instant scripted backend (bench/testing/scripted_server_main.cc: one
# token, no delay); in front of it nginx (keep-alive upstream, no buffering) and `surge route`;
# `surge bench` sends the same constant-rate workload directly, through nginx, through surge
# route. Added latency = a percentile of E2E through a proxy minus the same percentile direct.
#   scripts/bench_route_overhead.sh OUT_PREFIX [RATE] [DURATION]      (defaults 5000, 10s)
# Writes OUT_PREFIX.{direct,nginx,route}.json and prints the table. Installs Debian's nginx if absent.
# scripts/bench_gateways.sh overhead measures sgl-router and vllm-router beside these.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 rate=${2:-5000} duration=${3:-10s}
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
build/surge route --host 127.0.0.1 --port "$port_route" --backend "http://127.0.0.1:$port_backend" \
  --policy round-robin "${route_flags[@]}" >"$out.route.log" 2>&1 &
pids+=($!)
for port in "$port_backend" "$port_nginx" "$port_route"; do
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
    sleep 0.1
  done
done
bench() {  # NAME PORT
  build/surge bench --url "http://127.0.0.1:$2" --model scripted-model --request-rate "$rate" --arrival constant \
    --duration "$duration" --input-len 16 --output-len 1 --calibrate=false --timeout 10s \
    --json "$out.$1.json" >"$out.$1.txt"
}
bench direct "$port_backend"
bench nginx "$port_nginx"
bench route "$port_route"
/usr/bin/python3 - "$out" "$rate" <<'PY'
import json, sys
out, rate = sys.argv[1], float(sys.argv[2])
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
sys.exit(0 if ok else 1)
PY

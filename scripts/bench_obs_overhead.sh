#!/usr/bin/env bash
# What tracing at sampling 1.0 and alarm evaluation cost (issue 16's target: with the metrics,
# <= 2% of output tok/s at concurrency 32). Two identical stacks, `surge route` in front of
# one `surge serve` on the bundled model: "off" runs neither; "on" exports every span of
# both processes over OTLP/HTTP to a receiver (a Python HTTP server that reads and drops them)
# and evaluates alarm rules every second (the seed rules on the engine, the same rules with log
# actions on the router). `surge bench --compare` drives the same concurrency-32 workload at
# both, rounds alternating, so drift hits both alike. Besides output tok/s it reports each
# stack's CPU time (engine + router, from /proc, idle time between its rounds included) per
# 1000 output tokens: on 2 shared cores that is the steadier figure. Metrics cannot be switched off; their
# own cost is the metrics_bench figure (docs/BENCH.md).
#   scripts/bench_obs_overhead.sh OUT_PREFIX [DURATION] [REPEAT]     (defaults 20s, 3)
# To split the cost: TRACE=both|engine|route|none (default both), ALARMS=1|0 (default 1),
# MODEL=DIR (default models/stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 duration=${2:-20s} repeat=${3:-3}
base=${PORT:-18400}
port_otlp=$base port_engine_off=$((base + 1)) port_engine_on=$((base + 2)) port_route_off=$((base + 3)) port_route_on=$((base + 4))
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

/usr/bin/python3 - "$port_otlp" "$out.otlp.count" <<'PY' &
import http.server, sys, threading
port, count_path = int(sys.argv[1]), sys.argv[2]
lock, counts = threading.Lock(), {"posts": 0, "bytes": 0}
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            counts["posts"] += 1; counts["bytes"] += len(body)
            open(count_path, "w").write(f"{counts['posts']} {counts['bytes']}\n")
        self.send_response(200); self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Sink).serve_forever()
PY
pids+=($!)

# The seed rules evaluated every second: the engine's as shipped, the router's with log actions
# (no autoscaler or spawned workers here to scale or restart).
/usr/bin/python3 - "$work" <<'PY'
import json, sys, yaml
for name, log_only in (("engine_rules", False), ("seed_rules", True)):
    rules = yaml.safe_load(open(f"deploy/alarms/{name}.yaml"))
    rules["interval"] = "1s"
    for rule in rules["rules"]:
        if log_only:
            rule["action"] = {"type": "log"}
    json.dump(rules, open(f"{sys.argv[1]}/{'route' if log_only else 'engine'}_rules.json", "w"))
PY

trace=${TRACE:-both} alarms=${ALARMS:-1} model=${MODEL:-models/stories260K}
tracing=(--otlp-endpoint "http://127.0.0.1:$port_otlp" --trace-sample-ratio 1.0)
engine_on=() route_on=()
[[ $trace == both || $trace == engine ]] && engine_on+=("${tracing[@]}")
[[ $trace == both || $trace == route ]] && route_on+=("${tracing[@]}")
[[ $alarms == 1 ]] && engine_on+=(--alarm-rules "$work/engine_rules.json") && route_on+=(--alarm-rules "$work/route_rules.json")
serve() {  # PORT LOG [FLAGS...]
  local port=$1 log=$2; shift 2
  build/surge serve "$model" --host 127.0.0.1 --port "$port" "$@" >"$log" 2>&1 &
  pids+=($!)
}
serve "$port_engine_off" "$out.engine_off.log"
pid_engine_off=$!
serve "$port_engine_on" "$out.engine_on.log" "${engine_on[@]}"
pid_engine_on=$!
for port in "$port_engine_off" "$port_engine_on"; do
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
done
build/surge route --host 127.0.0.1 --port "$port_route_off" --backend "http://127.0.0.1:$port_engine_off" \
  >"$out.route_off.log" 2>&1 &
pids+=($!)
pid_route_off=$!
build/surge route --host 127.0.0.1 --port "$port_route_on" --backend "http://127.0.0.1:$port_engine_on" \
  "${route_on[@]}" >"$out.route_on.log" 2>&1 &
pids+=($!)
pid_route_on=$!
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, in clock ticks
for port in "$port_route_off" "$port_route_on"; do
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
done

cpu_before=() cpu_after=()
for pid in "$pid_engine_off" "$pid_route_off" "$pid_engine_on" "$pid_route_on"; do cpu_before+=("$(cpu_ticks "$pid")"); done
build/surge bench --compare "http://127.0.0.1:$port_route_off" "http://127.0.0.1:$port_route_on" \
  --concurrency 32 --duration "$duration" --repeat "$repeat" --input-len 32 --output-len 64 --ignore-eos \
  --calibrate=false --timeout 60s --json "$out.json" >"$out.txt"

for pid in "$pid_engine_off" "$pid_route_off" "$pid_engine_on" "$pid_route_on"; do cpu_after+=("$(cpu_ticks "$pid")"); done
ticks=$(getconf CLK_TCK)
cpu_off=$(( (cpu_after[0] - cpu_before[0] + cpu_after[1] - cpu_before[1]) ))
cpu_on=$(( (cpu_after[2] - cpu_before[2] + cpu_after[3] - cpu_before[3]) ))
/usr/bin/python3 - "$out" ":$port_route_off" ":$port_route_on" "$cpu_off" "$cpu_on" "$ticks" <<'PY'
import json, sys
out = sys.argv[1]
cpu_s = {"off": int(sys.argv[4]) / int(sys.argv[6]), "on": int(sys.argv[5]) / int(sys.argv[6])}
rounds = json.load(open(f"{out}.json"))["rounds"]
off = next(r for r in rounds if r["url"].endswith(sys.argv[2]))
on = next(r for r in rounds if r["url"].endswith(sys.argv[3]))
print(f"{'':4} {'out tok/s':>10} {'req/s':>8} {'TTFT p50 ms':>12} {'TPOT p50 ms':>12} {'done':>6} {'failed':>6}")
for name, r in (("off", off), ("on", on)):
    print(f"{name:4} {r['output_token_throughput']:10.1f} {r['request_throughput']:8.2f} {r['ttft_ms']['median']:12.2f} "
          f"{r['tpot_ms']['median']:12.3f} {r['completed']:6d} {r['failed']:6d}")
cost = 1 - on["output_token_throughput"] / off["output_token_throughput"]
cpu_per_k = {name: 1000 * cpu_s[name] / r["total_output_tokens"] for name, r in (("off", off), ("on", on))}
print(f"CPU s per 1000 output tokens (engine + router): off {cpu_per_k['off']:.4f}, on {cpu_per_k['on']:.4f}, "
      f"on/off {cpu_per_k['on'] / cpu_per_k['off']:.4f}")
print(f"tracing 1.0 + alarms: on/off output tok/s = {on['output_token_throughput'] / off['output_token_throughput']:.4f} "
      f"(cost {100 * cost:+.2f}%)")
try:
    posts, size = open(f"{out}.otlp.count").read().split()
    print(f"OTLP receiver: {posts} POSTs, {size} bytes")
except OSError:
    print("OTLP receiver: nothing received")
sys.exit(0 if off["failed"] == 0 and on["failed"] == 0 else 1)
PY

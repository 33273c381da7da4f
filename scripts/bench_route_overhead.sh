#!/usr/bin/env bash
# The gateway's added latency, side by side with nginx as a plain reverse proxy (issue 14's
# overhead target). One instant scripted backend (bench/testing/scripted_server_main.cc: one
# token, no delay); in front of it nginx (keep-alive upstream, no buffering) and `surge route`;
# `surge bench` sends the same constant-rate workload directly, through nginx, through surge
# route. Added latency = a percentile of E2E through a proxy minus the same percentile direct.
#   scripts/bench_route_overhead.sh OUT_PREFIX [RATE] [DURATION]      (defaults 5000, 10s)
# Writes OUT_PREFIX.{direct,nginx,route}.json and prints the table. Installs Debian's nginx if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 rate=${2:-5000} duration=${3:-10s}
port_backend=${PORT:-18300} port_nginx=$((${PORT:-18300} + 1)) port_route=$((${PORT:-18300} + 2))
if ! command -v nginx >/dev/null; then  # Debian's nginx; RUNLEVEL=1 keeps its package from starting a daemon
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
fi
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
build/bench/loadgen_scripted_server --port "$port_backend" --num-tokens 1 </dev/zero >"$out.backend.log" 2>&1 &
pids+=($!)
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $work/body;
  proxy_temp_path $work/proxy;
  upstream backend { server 127.0.0.1:$port_backend; keepalive 512; }
  server {
    listen 127.0.0.1:$port_nginx;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
pids+=($!)
build/surge route --host 127.0.0.1 --port "$port_route" --backend "http://127.0.0.1:$port_backend" \
  --policy round-robin >"$out.route.log" 2>&1 &
pids+=($!)
for port in "$port_backend" "$port_nginx" "$port_route"; do
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
    sleep 0.1
  done
done
bench() {  # NAME PORT
  build/surge bench --url "http://127.0.0.1:$2" --model scripted --request-rate "$rate" --arrival constant \
    --duration "$duration" --input-len 16 --output-len 1 --calibrate=false --timeout 10s \
    --json "$out.$1.json" >"$out.$1.txt"
}
bench direct "$port_backend"
bench nginx "$port_nginx"
bench route "$port_route"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def e2e(name):
    rounds = json.load(open(f"{out}.{name}.json"))["rounds"]
    return rounds[0]["e2e_latency_ms"]
d = e2e("direct")
print(f"{'':8} {'mean':>8} {'p50':>8} {'p95':>8} {'p99':>8}   (E2E ms; added = proxy - direct)")
for name in ("direct", "nginx", "route"):
    m = e2e(name)
    print(f"{name:8} " + " ".join(f"{m[k]:8.3f}" for k in ("mean", "p50", "p95", "p99")))
for name in ("nginx", "route"):
    m = e2e(name)
    print(f"added {name:6} " + " ".join(f"{m[k] - d[k]:8.3f}" for k in ("mean", "p50", "p95", "p99")))
n, r = e2e("nginx"), e2e("route")
print("route/nginx added p99 ratio: %.2f" % ((r["p99"] - d["p99"]) / max(n["p99"] - d["p99"], 1e-9)))
PY

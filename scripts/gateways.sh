# Sourced, not run: starts one gateway in front of backends, for the benchmarks that put
# gateways side by side (scripts/bench_gateways.sh, scripts/bench_route_overhead.sh). Each
# listens on 127.0.0.1 only (sgl-router and vllm-router bind 0.0.0.0 by default, for their
# Prometheus listener too: both are given 127.0.0.1), logs at warning level (a log line per
# request would be measured as gateway CPU), and leaves its PID in gw_pid.
#   start_gateway NAME POLICY PORT WORKDIR URL...
#     NAME: nginx | sgl-router | vllm-router | surge-route
#     POLICY: round-robin | cache-aware (nginx: round-robin only)
# The caller stops gw_pid. SURGE_ROUTE_FLAGS adds flags to surge route; the peers come from
# scripts/install_peer_routers.sh.

# Debian's nginx, installed when absent; RUNLEVEL=1 keeps its package from starting a daemon.
ensure_nginx() {
  command -v nginx >/dev/null && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
}

# A plain reverse proxy: one worker, keep-alive upstream, no buffering, round-robin.
start_nginx() {  # PORT WORKDIR URL...
  local port=$1 dir=$2; shift 2
  ensure_nginx
  mkdir -p "$dir"
  { echo "worker_processes 1; pid $dir/nginx.pid; error_log $dir/error.log warn;"
    echo "events { worker_connections 8192; }"
    echo "http { access_log off; client_body_temp_path $dir/body; proxy_temp_path $dir/proxy;"
    echo "  upstream backend {"; for url in "$@"; do echo "    server ${url#http://};"; done; echo "    keepalive 512; }"
    echo "  server { listen 127.0.0.1:$port; location / { proxy_pass http://backend; proxy_http_version 1.1;"
    echo "    proxy_set_header Connection \"\"; proxy_buffering off; proxy_read_timeout 600s; } } }"
  } >"$dir/nginx.conf"
  nginx -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;' &
  gw_pid=$!
}

start_gateway() {  # NAME POLICY PORT WORKDIR URL...
  local name=$1 policy=$2 port=$3 dir=$4; shift 4
  local bin sgl_policy=round_robin
  [ "$policy" = cache-aware ] && sgl_policy=cache_aware
  mkdir -p "$dir"
  case "$name" in
    nginx) start_nginx "$port" "$dir" "$@" ;;
    sgl-router|vllm-router)
      local package=sglang-router launch=(launch) level=warn
      [ "$name" = vllm-router ] && { package=vllm-router; launch=(); level=warning; }
      bin=$(bash scripts/install_peer_routers.sh "$package")
      "$bin" "${launch[@]}" --host 127.0.0.1 --port "$port" --prometheus-host 127.0.0.1 \
        --prometheus-port $((port + 50)) --worker-urls "$@" --policy "$sgl_policy" --log-level "$level" \
        >"$dir/$name.log" 2>&1 &
      gw_pid=$! ;;
    surge-route)
      local backends=() url
      for url in "$@"; do backends+=(--backend "$url"); done
      # shellcheck disable=SC2086
      build/surge route --host 127.0.0.1 --port "$port" --policy "$policy" ${SURGE_ROUTE_FLAGS:-} "${backends[@]}" \
        >"$dir/$name.log" 2>&1 &
      gw_pid=$! ;;
    *) echo "start_gateway: unknown gateway '$name'" >&2; return 2 ;;
  esac
}

# CPU time (clock ticks, user + system) of PID and its children (nginx's worker).
cpu_ticks() {  # PID
  local total=0 pid
  for pid in "$1" $(ps -o pid= --ppid "$1" 2>/dev/null); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

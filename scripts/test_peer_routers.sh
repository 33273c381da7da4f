#!/usr/bin/env bash
# Real surge engines behind the real sgl-router and vllm-router (docs/GATEWAYS.md): for each,
# two `surge serve` engines (--get-load-format for that router) behind it with power-of-two,
# then chat, completion and both streamed must answer 200 through it, and the router must read
# a busy engine's load from /get_load (its own log's power-of-two line; its load monitor polls
# every 30 s, so each router takes about a minute). Not in make test: the routers are 25-30 MB
# wheels installed on demand (scripts/install_peer_routers.sh). Both the router and its
# Prometheus listener are bound to 127.0.0.1. Exits non-zero on the first failed check.
#   scripts/test_peer_routers.sh [sglang-router] [vllm-router]     (default: both)
# MODEL (default the SmolLM2 GGUF), PORT (default 18500: PORT..PORT+9 are used).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${MODEL:-models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf} base=${PORT:-18500}
routers=("$@"); [ ${#routers[@]} -eq 0 ] && routers=(sglang-router vllm-router)
work=$(mktemp -d) pids=()
stop_all() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT
fail() { echo "test_peer_routers: FAIL: $*" >&2; exit 1; }
wait_url() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
name=$(basename "$model")
post() {  # PATH BODY -> prints the body; fails unless 200
  local code
  code=$(curl -s -m 60 -o "$work/out" -w '%{http_code}' "http://127.0.0.1:$base$1" -H 'content-type: application/json' -d "$2")
  [ "$code" = 200 ] || fail "$router: POST $1 answered $code: $(head -c 300 "$work/out")"
  cat "$work/out"
}
for router in "${routers[@]}"; do
  bin=$(bash scripts/install_peer_routers.sh "$router")
  format=sgl-router; launch=("$bin" launch)
  [ "$router" = vllm-router ] && { format=vllm-router; launch=("$bin"); }
  for i in 1 2; do
    build/surge serve "$model" --host 127.0.0.1 --port $((base + i)) --threads 1 --kv-cache-memory 256MiB \
      --get-load-format "$format" >"$work/engine$i.log" 2>&1 &
    pids+=($!)
  done
  for i in 1 2; do wait_url "http://127.0.0.1:$((base + i))/health" || fail "engine $i did not start"; done
  "${launch[@]}" --host 127.0.0.1 --port "$base" --prometheus-host 127.0.0.1 --prometheus-port $((base + 9)) \
    --worker-urls "http://127.0.0.1:$((base + 1))" "http://127.0.0.1:$((base + 2))" --policy power_of_two \
    --log-level debug >"$work/$router.log" 2>&1 &
  pids+=($!)
  wait_url "http://127.0.0.1:$base/v1/models" || fail "$router did not start: $(tail -5 "$work/$router.log")"
  ss -ltn | awk '{print $4}' | grep -E ":($base|$((base + 9)))\$" | grep -qv '^127\.0\.0\.1:' && fail "$router listens beyond 127.0.0.1"
  chat='"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4'
  post /v1/chat/completions "{\"model\": \"$name\", $chat}" | grep -q '"content"' || fail "$router: chat without content"
  post /v1/completions "{\"model\": \"$name\", \"prompt\": \"Once\", \"max_tokens\": 4}" | grep -q '"text"' || fail "$router: no text"
  post /v1/chat/completions "{\"model\": \"$name\", $chat, \"stream\": true}" | grep -q '\[DONE\]' || fail "$router: chat stream"
  post /v1/completions "{\"model\": \"$name\", \"prompt\": \"Once\", \"max_tokens\": 4, \"stream\": true}" |
    grep -q '\[DONE\]' || fail "$router: completion stream"
  # Engine 1 busy with two long requests; the router must see it loaded (>0) within its poll.
  for _ in 1 2; do
    curl -s -m 120 "http://127.0.0.1:$((base + 1))/v1/completions" -H 'content-type: application/json' \
      -d "{\"model\": \"$name\", \"prompt\": \"Once\", \"max_tokens\": 4000, \"ignore_eos\": true}" >/dev/null &
    pids+=($!)
  done
  seen=0
  for _ in $(seq 1 40); do
    sleep 2
    post /v1/completions "{\"model\": \"$name\", \"prompt\": \"hi\", \"max_tokens\": 1}" >/dev/null
    sed 's/\x1b\[[0-9;]*m//g' "$work/$router.log" | grep -qE "Power-of-two selection: .*:$((base + 1))=[1-9]" && { seen=1; break; }
  done
  [ "$seen" = 1 ] || fail "$router never read engine 1's load: $(sed 's/\x1b\[[0-9;]*m//g' "$work/$router.log" | grep -i 'power-of-two' | tail -2)"
  echo "test_peer_routers: $router ok: chat, completion, both streamed; load read: $(sed 's/\x1b\[[0-9;]*m//g' "$work/$router.log" | grep -oE 'Power-of-two selection: .*' | tail -1)"
  stop_all
done

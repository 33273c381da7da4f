#!/usr/bin/env bash
# The whole side-by-side comparison (docs/PEERS.md): start every engine with
# scripts/peers/serve.sh (ports PORT, PORT+1, ...), read their /metrics, run every workload at
# every concurrency against each engine in turn with GuideLLM and `surge bench` one after the
# other, read /metrics again, stop them; then scripts/peers/report.py writes OUT/peers.json,
# OUT/peers.html and prints the table.
#   scripts/peers/run.sh OUT
# Env (defaults in brackets):
#   ENGINES [surge vllm llamacpp]   WORKLOADS [chat prefix long]   CLIENTS [guidellm surge]
#   CONCURRENCY [1 4 16 32 64]      REQUESTS_PER_C [2] and REQUESTS_MIN [8]: a point sends
#   max(REQUESTS_MIN, REQUESTS_PER_C * c) requests   OUTPUT_CAP [256]: most output tokens
#   GGUF [models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf]   PORT [18400]
#   PEERS_CACHE [${SURGE_PEERS_CACHE:-/var/cache/surge/peers}]: the peers' venvs
#   (scripts/peers/install_vllm.sh, install_guidellm.sh) and the converted model
#   LLAMA_SERVER: llama.cpp's llama-server (without it llamacpp is reported as not run)
#   START_TIMEOUT [900]: seconds an engine may take to answer /health
#   serve.sh's PEERS_* settings (KV budget, max context, threads) pass through.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/peers/run.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
engines=${ENGINES:-surge vllm llamacpp} workloads=${WORKLOADS:-chat prefix long}
clients=${CLIENTS:-guidellm surge} concurrency=${CONCURRENCY:-1 4 16 32 64}
gguf=${GGUF:-models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf}
port=${PORT:-18400}
cache=${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}
export PEERS_CACHE=$cache
hf=$cache/$(basename "$gguf" .gguf)-bf16
name=${PEERS_MODEL_NAME:-SmolLM2-135M-Instruct}
python=${PYTHON:-.venv/bin/python}
declare -A servers=() urls=()
client=""
stop_all() {
  [ -z "$client" ] || kill -TERM "$client" 2>/dev/null || true
  for engine in "${!servers[@]}"; do kill -TERM "${servers[$engine]}" 2>/dev/null || true; done
  # vLLM drains requests in flight before it exits: 60 s, then KILL.
  for _ in $(seq 120); do
    local alive=0
    for engine in "${!servers[@]}"; do kill -0 "${servers[$engine]}" 2>/dev/null && alive=1; done
    [ $alive = 1 ] || break
    sleep 0.5
  done
  for engine in "${!servers[@]}"; do kill -KILL "${servers[$engine]}" 2>/dev/null || true; done
  for engine in "${!servers[@]}"; do wait "${servers[$engine]}" 2>/dev/null || true; done
  servers=()
}
trap stop_all EXIT
trap 'exit 143' TERM INT

# A client in the background, waited for: a TERM to this script then stops it and the engines at once.
measure() {  # OUT ERR COMMAND...
  local out=$1 err=$2
  shift 2
  "$@" >"$out" 2>"$err" &
  client=$!
  wait "$client" || true
  client=""
}

# The same weights as a Hugging Face directory: vLLM's model, and every client's tokenizer.
[ -f "$hf/model.safetensors" ] || build/surge convert "$gguf" "$hf" --dtype bf16

requests_for() { local n=$((${REQUESTS_PER_C:-2} * $1)); echo $((n < ${REQUESTS_MIN:-8} ? ${REQUESTS_MIN:-8} : n)); }

# Its own prompts for each engine, client and concurrency (no point meets a prompt an earlier one
# cached), the same system prompt everywhere; an engine's files are the same for every engine.
workloads_for() {  # CLIENT C -> directory
  local dir=$out/workloads/${1}_c$2 seed=$(($2 * 2))
  [ "$1" = surge ] && seed=$((seed + 1))
  [ -d "$dir" ] || "$python" scripts/peers/make_workloads.py --tokenizer "$hf" --out "$dir" \
    --requests "$(requests_for "$2")" --seed "$seed" --output-cap "${OUTPUT_CAP:-256}" >/dev/null
  echo "$dir"
}

run_surge_bench() {  # URL WORKLOAD C OUTDIR
  local dir; dir=$(workloads_for surge "$3")
  measure "$4/surge_c$3.out" "$4/surge_c$3.err" build/surge bench --url "$1" --model "$name" --workload jsonl \
    --dataset "$dir/$2.jsonl" --concurrency "$3" --num-requests "$(requests_for "$3")" --timeout 1200s \
    --json "$4/surge_c$3.json"
}

run_guidellm() {  # URL WORKLOAD C OUTDIR
  local dir; dir=$(workloads_for guidellm "$3")
  measure "$4/guidellm_c$3.out" "$4/guidellm_c$3.err" bash scripts/peers/guidellm.sh "$1" "$name" "$hf" \
    "$dir/$2.guidellm.jsonl" "$3" "$(requests_for "$3")" "$4/guidellm_c$3.json"
}

start_engine() {  # ENGINE PORT: starts it in the background, its PID in servers[ENGINE]
  local model=$gguf
  [ "$1" = vllm ] && model=$hf
  mkdir -p "$out/$1"
  scripts/peers/serve.sh "$1" "$model" "$2" >"$out/$1/serve.log" 2>&1 &
  servers[$1]=$!
  urls[$1]=http://127.0.0.1:$2
}

wait_ready() {  # ENGINE: 0 once it answers GET /health; else error.txt says why and it is stopped
  local engine=$1
  for _ in $(seq "${START_TIMEOUT:-900}"); do
    curl -sf "${urls[$engine]}/health" >/dev/null 2>&1 && return 0
    kill -0 "${servers[$engine]}" 2>/dev/null || break
    sleep 1
  done
  { echo "$engine did not answer GET /health; the last lines of its log:"; tail -n 40 "$out/$engine/serve.log"; } \
    >"$out/$engine/error.txt"
  kill -TERM "${servers[$engine]}" 2>/dev/null || true
  wait "${servers[$engine]}" 2>/dev/null || true
  unset "servers[$engine]"
  return 1
}

"$python" scripts/peers/machine.py start "$out/meta.json" --engines "$engines" --workloads "$workloads" \
  --clients "$clients" --concurrency "$concurrency"
# All engines up at once, each on its own port, idle while another is measured: every point
# runs engine after engine, client after client, so the machine's other load weighs on all alike.
i=0
for engine in $engines; do start_engine "$engine" $((port + i)); i=$((i + 1)); done
ready=()
for engine in $engines; do
  if wait_ready "$engine"; then
    ready+=("$engine")
    curl -s "${urls[$engine]}/metrics" >"$out/$engine/metrics_before.txt" || true
  fi
done
for workload in $workloads; do
  for c in $concurrency; do
    for engine in "${ready[@]}"; do
      mkdir -p "$out/$engine/$workload"
      for client in $clients; do
        echo "   $workload c=$c $engine $client" >&2
        "run_${client/surge/surge_bench}" "${urls[$engine]}" "$workload" "$c" "$out/$engine/$workload"
      done
    done
  done
done
for engine in "${ready[@]}"; do curl -s "${urls[$engine]}/metrics" >"$out/$engine/metrics_after.txt" || true; done
stop_all
"$python" scripts/peers/machine.py done "$out/meta.json"
"$python" scripts/peers/report.py "$out"

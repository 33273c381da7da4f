#!/bin/sh
# /metrics bytes of one engine (bundled model) after 16 completions, without and with
# --metrics-compat vllm (docs/VLLM_COMPAT.md). Usage: sh scripts/vllm_metrics_size.sh (from the repo root, after a build).
set -e
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for compat in none vllm; do
  build/surge serve models/stories260K --host 127.0.0.1 --port 0 --threads 1 --metrics-compat $compat > "$out" 2>/dev/null &
  pid=$!
  for i in $(seq 100); do grep -q "ready on" "$out" && break; sleep 0.1; done
  url=$(grep -o "ready on http://[^ ]*" "$out" | cut -d' ' -f3)
  for i in $(seq 16); do curl -s $url/v1/completions -H 'Content-Type: application/json' -d '{"prompt": "Once upon a time", "max_tokens": 16}' > /dev/null; done
  echo "$compat: $(curl -s $url/metrics | wc -c) bytes, $(curl -s $url/metrics | grep -vc '^#') samples"
  kill $pid; wait $pid || true
done

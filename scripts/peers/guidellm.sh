#!/usr/bin/env bash
# One GuideLLM point of the comparison (scripts/peers/run.sh): a closed loop of C streams sending
# the jsonl file's requests (/v1/completions, streamed; GuideLLM sets max_tokens from the file's
# output_tokens_count with ignore_eos, we add temperature 0, and usage in the last chunk only:
# GuideLLM asks every chunk to carry it, which surge refuses and llama.cpp ignores), N requests.
#   scripts/peers/guidellm.sh URL MODEL TOKENIZER_DIR DATA.jsonl C N OUT.json
# GuideLLM comes from ${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}/guidellm-0.8.1
# (scripts/peers/install_guidellm.sh), or GUIDELLM=path; it never reaches a hub.
set -euo pipefail
[ $# -eq 7 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
url=$1 model=$2 tokenizer=$3 data=$4 c=$5 n=$6 out=$7
cache=${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}
guidellm=${GUIDELLM:-$cache/guidellm-0.8.1/bin/guidellm}
[ -x "$guidellm" ] || { echo "guidellm.sh: no GuideLLM at $guidellm; run scripts/peers/install_guidellm.sh" >&2; exit 1; }
scenario=$(mktemp --suffix=.json)
trap 'rm -f "$scenario"' EXIT
python3 - "$url" "$model" "$tokenizer" "$data" "$c" "$n" "$out" >"$scenario" <<'PY'
import json, sys
url, model, tokenizer, data, c, n, out = sys.argv[1:]
print(json.dumps({"spec": {
    "backend": {"kind": "openai_http", "target": url, "model": model, "request_format": "/v1/completions",
                "timeout": 1200, "extras": {"body": {"temperature": 0,
                "stream_options": {"include_usage": True, "continuous_usage_stats": False}}}},
    "profile": {"kind": "concurrent", "streams": [int(c)]},
    "constraints": [{"kind": "max_requests", "count": int(n)}],
    "tokenizer": {"kind": "hf_auto", "model": tokenizer},
    "data": [{"kind": "json_file", "path": data}],
    "outputs": [{"kind": "json", "path": out}],
}}))
PY
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
  exec "$guidellm" run --scenario "$scenario" --disable-console-interactive

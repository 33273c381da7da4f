#!/usr/bin/env bash
# Speculative decoding on SmolLM2-135M-Instruct (docs/BENCH.md, "Speculative decoding on
# SmolLM2"): the target is the Q4_1 GGUF's weights dequantized into a float32 Hugging Face
# directory (tests/reference/gguf_llama_to_hf.py) and loaded --dtype bf16; each line is one
# scripts/bench_compare.sh run, A = without, B = with, rounds alternating, greedy, on chat
# requests (128 tokens each, ignore_eos) -- and for n-gram on the copy workload.
#   scripts/bench_speculative_smollm2.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
mkdir -p "$out"
gguf=models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
target=$out/smollm2-f32
[ -f "$target/model.safetensors" ] || .venv/bin/python tests/reference/gguf_llama_to_hf.py "$gguf" "$target"
.venv/bin/python - "$out/chat.jsonl" <<'PY'
import json, sys
topics = ["the sea", "a robot learning to paint", "the history of bread", "why the sky is blue", "a city at night",
          "how vaccines work", "a dragon who is afraid of heights", "the water cycle", "the first moon landing",
          "how to make tea", "a lighthouse keeper", "photosynthesis", "a lost umbrella", "volcanoes", "chess", "bees"]
with open(sys.argv[1], "w") as f:
    for t in topics:
        f.write(json.dumps({"messages": [{"role": "user", "content": f"Write a short story about {t}."}],
                            "max_tokens": 128, "temperature": 0, "ignore_eos": True}) + "\n")
PY
scripts/make_copy_workload.py "$out/copy.jsonl" --lines 16 --max-tokens 96
base="--dtype bf16 --kv-cache-memory 1GiB"
one="--workload jsonl --dataset $out/chat.jsonl --concurrency 1 --num-requests ${NUM_ONE:-8}"
c32="--workload jsonl --dataset $out/chat.jsonl --concurrency 32 --num-requests ${NUM_C32:-64}"
copy="--workload jsonl --dataset $out/copy.jsonl --concurrency 1 --num-requests ${NUM_ONE:-8}"
run() {  # name, serve flags B, bench flags
  echo "== $1"
  scripts/bench_compare.sh "$target" "$out/$1" "$base" "$base $2" "$3" 2>/dev/null | tail -4
  grep -h 'spec_decode' "$out/$1.metrics_b.txt" | grep -v '^#' || true
}
run single_int8 "--speculative draft --draft-quantize int8" "$one"
run single_int4 "--speculative draft --draft-quantize int4" "$one"
run single_ngram "--speculative ngram" "$copy"
run c32_int8 "--speculative draft --draft-quantize int8" "$c32"
# Greedy output unchanged: surge generate with and without each proposer, the same ids.
for spec in "--speculative draft --draft-quantize int8" "--speculative draft --draft-quantize int4" \
            "--speculative ngram"; do
  for prompt in "The history of bread begins" "def fibonacci(n):"; do
    # shellcheck disable=SC2086
    a=$(build/surge generate --model "$target" --dtype bf16 --prompt "$prompt" --max-tokens 96 --ignore-eos --json | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["output_token_ids"])')
    # shellcheck disable=SC2086
    b=$(build/surge generate --model "$target" --dtype bf16 $spec --prompt "$prompt" --max-tokens 96 --ignore-eos --json | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["output_token_ids"])')
    [ "$a" = "$b" ] && echo "same greedy ids: $spec / $prompt" || echo "DIFFERENT greedy ids: $spec / $prompt"
  done
done

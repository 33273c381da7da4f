#!/usr/bin/env bash
# Builds etcd, kube-apiserver and helm from the Go module proxy, once, into a cache
# outside the clone keyed by version: ${SURGE_CACHE:-/var/cache/surge}/k8s/<version>/bin, and
# copies KEDA's ScaledObject CRD out of its Go module into .../crds. The Go module and build
# caches live beside it, so a re-run costs nothing (the k8s tests, label k8s, use them).
# helm (v4) is built in the same module, so it shares the compiled k8s.io packages.
#   K8S_VERSION (v1.37.2)  HELM_VERSION (v4.3.2)  KEDA_VERSION (v2.21.1)  K8S_BUILD_JOBS (go -p, 2)
# Exit 0 with everything in place; exit 2 when the build is impossible here (no Go toolchain,
# the module proxy unreachable), writing the reason to .../unavailable for the tests' skip
# message; any other failure is an error (and the tests fail).
set -euo pipefail
K8S_VERSION="${K8S_VERSION:-v1.37.2}"
HELM_VERSION="${HELM_VERSION:-v4.3.2}"
KEDA_VERSION="${KEDA_VERSION:-v2.21.1}"
CACHE="${SURGE_CACHE:-/var/cache/surge}"
ROOT="$CACHE/k8s/$K8S_VERSION"
BIN="$ROOT/bin"
BINS=(etcd kube-apiserver helm)
CRD="$ROOT/crds/keda.sh_scaledobjects.yaml"

have_all() {
  for b in "${BINS[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done
  [[ -s "$CRD" ]]
}
unavailable() { mkdir -p "$ROOT"; echo "$1" | tee "$ROOT/unavailable"; exit 2; }
have_all && exit 0  # cached: quiet, like the rest of scripts/setup.sh

command -v go >/dev/null || unavailable "no Go toolchain (go not on PATH)"
mkdir -p "$ROOT/wrapper" "$ROOT/crds" "$BIN" "$CACHE/go/mod" "$CACHE/go/build"
export GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build" GOFLAGS="-mod=mod -p=${K8S_BUILD_JOBS:-2}"
export CGO_ENABLED=0 GOTOOLCHAIN=local
if ! timeout 60 go list -m "k8s.io/kubernetes@$K8S_VERSION" >/dev/null 2>&1; then
  unavailable "the Go module proxy ($(go env GOPROXY)) does not answer for k8s.io/kubernetes@$K8S_VERSION"
fi
rm -f "$ROOT/unavailable"
start=$(date +%s)
cd "$ROOT/wrapper"
# The wrapper module: k8s.io/kubernetes plus every staging module it replaces by a local path,
# replaced here by its published version (v1.X.Y -> v0.X.Y), as kubernetes/autoscaler does.
staging_version="v0.${K8S_VERSION#v1.}"
modfile="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
{
  echo "module surge.local/k8s-control-plane"
  echo
  sed -n 's/^go \(.*\)/go \1/p' "$modfile"
  echo
  printf 'require (\n\tk8s.io/kubernetes %s\n\thelm.sh/helm/v4 %s\n)\n' "$K8S_VERSION" "$HELM_VERSION"
  echo
  echo "replace ("
  sed -n '/^replace (/,/^)/p' "$modfile" | awk -v v="$staging_version" \
    '/=> \.\/staging/ && $1 !~ /sample-/ {printf "\t%s => %s %s\n", $1, $1, v}'
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "helm.sh/helm/v4/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
GO
go mod tidy -e >/dev/null 2>&1 || true
go mod download
nice -n 10 go build -trimpath -ldflags="-s -w" -o "$BIN/" \
  go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver helm.sh/helm/v4/cmd/helm
[[ -x "$BIN/v3" ]] && mv "$BIN/v3" "$BIN/etcd"
[[ -x "$BIN/server" ]] && mv "$BIN/server" "$BIN/etcd"
# Only the module's zip: KEDA's go.mod asks for a newer Go than ours, so go downloads it but
# does not extract it (and exits 1).
keda_zip="$( (go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" || true) |
  sed -n 's/.*"Zip": "\(.*\)".*/\1/p')"
python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$keda_zip" \
  "github.com/kedacore/keda/v2@$KEDA_VERSION/config/crd/bases/keda.sh_scaledobjects.yaml" > "$CRD.tmp"
mv "$CRD.tmp" "$CRD"
have_all
echo "k8s control plane $K8S_VERSION built in $(( $(date +%s) - start )) s into $BIN"

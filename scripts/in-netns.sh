#!/usr/bin/env bash
# Runs a command inside a new network namespace whose only interface is loopback, so nothing it
# starts can reach any address but 127.0.0.1/::1: a Service-based webhook or a ClusterIP dial
# fails at once (ENETUNREACH) instead of leaving the machine.
#   scripts/in-netns.sh <command> [args...]
# As root it uses `unshare --net`; otherwise a user namespace (`--map-root-user`), which needs
# unprivileged user namespaces (enabled on most Linux distributions).
set -euo pipefail
if [ "${NLS_IN_NETNS:-}" = "1" ]; then exec "$@"; fi
command -v unshare >/dev/null || { echo "in-netns: unshare (util-linux) is required" >&2; exit 1; }
flags=(--net --fork)
[ "$(id -u)" = 0 ] || flags+=(--map-root-user)
export NLS_IN_NETNS=1
exec unshare "${flags[@]}" bash -c 'ip link set lo up 2>/dev/null || { echo "in-netns: cannot bring up lo (need iproute2)" >&2; exit 1; }; exec "$@"' in-netns "$@"

#!/usr/bin/env bash
# Runs a command inside new network and PID namespaces. The network namespace has only
# loopback up, so nothing the command starts can reach any address but 127.0.0.1/::1: a
# Service-based webhook or a ClusterIP dial fails at once (ENETUNREACH) instead of leaving the
# machine. The PID namespace makes the kernel kill every process left inside (an API server
# started by a test that timed out, say) when the command ends, or when this script is killed
# with SIGKILL (--kill-child; unshare itself blocks TERM and INT and leaves them to the command).
#   scripts/in-netns.sh <command> [args...]
# As root it uses `unshare` directly; otherwise a user namespace (`--map-root-user`), which needs
# unprivileged user namespaces (enabled on most Linux distributions).
set -euo pipefail
if [ "${NLS_IN_NETNS:-}" = "1" ]; then exec "$@"; fi
command -v unshare >/dev/null || { echo "in-netns: unshare (util-linux) is required" >&2; exit 1; }
flags=(--net --pid --mount-proc --fork --kill-child)
[ "$(id -u)" = 0 ] || flags+=(--map-root-user)
export NLS_IN_NETNS=1
# bash is PID 1 inside: it runs the command as a child, passes TERM/INT/HUP on to it (PID 1
# ignores signals it has no handler for) and exits with the command's status, which ends the
# namespace and everything still in it.
init='ip link set lo up 2>/dev/null || { echo "in-netns: cannot bring up lo (need iproute2)" >&2; exit 1; }
"$@" & child=$!
trap '\''kill -TERM "$child" 2>/dev/null'\'' TERM INT HUP
while :; do wait "$child"; status=$?; kill -0 "$child" 2>/dev/null || break; done
exit "$status"'
exec unshare "${flags[@]}" bash -c "$init" in-netns "$@"

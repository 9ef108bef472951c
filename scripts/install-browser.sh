#!/usr/bin/env bash
# Installs the headless browser the key portal's integration test drives through puppeteer-core:
# Debian's chromium-headless-shell (plus fonts-liberation, so pages render text in screenshots).
# The test runs /usr/lib/chromium/chromium-headless-shell. Debian/Ubuntu packages through apt;
# elsewhere install a Chromium headless shell yourself and the test names the path it expects.
set -euo pipefail

packages=(chromium-headless-shell fonts-liberation)
binary=/usr/lib/chromium/chromium-headless-shell
have() { [ -x "$binary" ] && [ -d /usr/share/fonts/truetype/liberation ]; }

if have; then echo "browser: $binary present"; exit 0; fi

command -v apt-get >/dev/null || {
  echo "browser: $binary (Debian package chromium-headless-shell) and fonts-liberation are required; install them with your package manager" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || { echo "browser: installing ${packages[*]} needs root (or install them yourself)" >&2; exit 1; }

echo "browser: installing ${packages[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
# An empty package index (a fresh machine) makes the install fail; refresh it once then.
apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 || {
  apt-get update -qq
  apt-get install -y --no-install-recommends "${packages[@]}"
}
have || { echo "browser: installed ${packages[*]} but $binary is still missing" >&2; exit 1; }
echo "browser: ready ($("$binary" --version 2>/dev/null | head -1))"

#!/usr/bin/env bash
# Installs what Myriad needs from Debian's packages, when it is missing.
# Idempotent: a machine that has everything is left alone.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  libsimgrid-dev libeigen3-dev libfmt-dev libcli11-dev libyaml-cpp-dev
  nlohmann-json3-dev libgtest-dev libbenchmark-dev libglpk-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler
  clang-format clang-tidy ccache python3 time
  clang libclang-rt-dev
  chromium
  libopenmpi-dev openmpi-bin
)
# Node.js with npm, for the HTML report's packages: Debian's unless one is there.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The HTML report's npm packages (Vega and Vega-Lite, inlined in reports;
# playwright-core, for its browser test), at the versions package-lock.json pins.
root=$(cd "$(dirname "$0")/.." && pwd)
report="$root/tools/report"
if ! cmp -s "$report/package-lock.json" "$report/node_modules/.myriad-installed-lock" 2>/dev/null; then
  echo "setup: installing the HTML report's npm packages into $report/node_modules" >&2
  (cd "$report" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$report/package-lock.json" "$report/node_modules/.myriad-installed-lock"
fi

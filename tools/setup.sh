#!/usr/bin/env bash
# Installs what Myriad needs from Debian's packages, when it is missing.
# Idempotent: a machine that has everything is left alone.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  libsimgrid-dev libeigen3-dev libfmt-dev libcli11-dev libyaml-cpp-dev
  nlohmann-json3-dev libgtest-dev libbenchmark-dev
  clang-format clang-tidy ccache python3
  clang libclang-rt-dev
)

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

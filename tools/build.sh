#!/usr/bin/env bash
# Configures (once) and builds Myriad incrementally with Ninja.
#   tools/build.sh [BUILD_DIR] [extra cmake -D options...] [-- targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
cmake_args=()
targets=()
while (($#)); do
  if [[ $1 == -- ]]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
if [[ ! -f "$build/build.ninja" ]] || ((${#cmake_args[@]} > 0)); then
  cmake -S "$root" -B "$build" -G Ninja "${cmake_args[@]}" >/dev/null
fi
jobs=$(nproc 2>/dev/null || echo 2)
if ((${#targets[@]} > 0)); then
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "$build" -j "$jobs"
fi

#!/usr/bin/env bash
# Configures and builds Myriad incrementally with Ninja.
#   tools/build.sh [BUILD_DIR] [cmake -D options...] [-- targets...]
# Without -D options the build takes the standard configuration below, the one
# tools/quickstart.sh and tools/test.sh share, so whichever runs second reuses
# the first one's objects.
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
# Whether every -DNAME=VALUE is already in the build's cache (so that a second
# configure, which costs seconds, is skipped).
configured_with() {
  local cache="$1/CMakeCache.txt" arg name value
  shift
  [[ -f $cache ]] || return 1
  for arg in "$@"; do
    [[ $arg == -D*=* ]] || return 1
    name=${arg#-D}; value=${name#*=}; name=${name%%=*}; name=${name%%:*}
    grep -Eq "^${name}(:[A-Z]+)?=${value}\$" "$cache" || return 1
  done
}
standard=(-DMYRIAD_WERROR=ON -DMYRIAD_CUDA=AUTO)
if ((${#cmake_args[@]} == 0)); then cmake_args=("${standard[@]}"); fi
if [[ ! -f "$build/build.ninja" ]] || ! configured_with "$build" "${cmake_args[@]}"; then
  cmake -S "$root" -B "$build" -G Ninja "${cmake_args[@]}" >/dev/null
fi
jobs=$(nproc 2>/dev/null || echo 2)
if ((${#targets[@]} > 0)); then
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "$build" -j "$jobs"
fi

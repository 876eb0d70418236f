#!/usr/bin/env bash
# Builds the sanitizer configuration in build-sanitize/: clang with ASan, UBSan and
# libFuzzer's coverage on every library, lightly optimized (-O1) with line tables for
# stack traces, no CUDA. The tests (tools/test.sh --sanitize) and the fuzz harnesses
# (tools/fuzz.sh) link the same objects: one sanitizer build, not two.
#   tools/sanitize_build.sh [-- targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CC=clang CXX=clang++ exec "$root/tools/build.sh" "$root/build-sanitize" -DMYRIAD_WERROR=ON \
  -DMYRIAD_SANITIZE=ON -DMYRIAD_FUZZ=ON -DMYRIAD_CUDA=OFF -DMYRIAD_BUILD_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "$@"

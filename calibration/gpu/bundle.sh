#!/usr/bin/env bash
# Builds Myriad with CUDA here and packs what the GPU scripts need on a device
# machine whose image has CUDA 13 but none of Myriad's Debian libraries: the
# `myriad` binary, the GPU test programs, and every shared library they load
# that is neither glibc's nor CUDA's. Writes .gpu-bundle/bundle.tar.xz (ignored
# by git); carry ".gpu-bundle" to the device and run calibration/gpu/check.sh or
# calibration/gpu/calibrate.sh there.
#   calibration/gpu/bundle.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-gpu"
programs=(tools/myriad tests/myriad_ops_gpu_tests tests/myriad_kernels_gpu_tests
  tests/myriad_collectives_gpu_tests tests/myriad_cublaslt_loader_tests)
"$root/tools/build.sh" "$build" -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
  -DMYRIAD_BUILD_BENCHMARKS=OFF -DMYRIAD_WERROR=ON -- "${programs[@]##*/}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for p in "${programs[@]}"; do
  cp "$build/$p" "$stage/bin/"
  strip "$stage/bin/$(basename "$p")"
  # Libraries the image lacks; glibc and the CUDA runtime, cuBLAS and NCCL come from the image.
  ldd "$build/$p" | awk '/=> \// {print $3}' |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libcuda|libcudart|libcublas|libcublasLt|libnccl)\.so' |
    while read -r lib; do cp -Ln "$lib" "$stage/lib/" 2>/dev/null || true; done
done
mkdir -p "$root/.gpu-bundle"
tar -C "$stage" -cJf "$root/.gpu-bundle/bundle.tar.xz" .
echo "bundle: $(du -h "$root/.gpu-bundle/bundle.tar.xz" | cut -f1) in .gpu-bundle/bundle.tar.xz" \
  "($(ls "$stage/lib" | wc -l) libraries); carry .gpu-bundle"

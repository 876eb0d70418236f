# Sourced by check.sh and calibrate.sh on the GPU machine: finds Myriad's
# programs (from .gpu-bundle, or built here when the machine has the
# dependencies) and the CUDA libraries, and sets $bin, $out and $root.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-"$root/gpu-out"}
mkdir -p "$out"
if [[ -f "$root/.gpu-bundle/bundle.tar.xz" ]]; then
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$root/.gpu-bundle/bundle.tar.xz"
  bin="$unpacked/bin"
  export LD_LIBRARY_PATH="$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "no .gpu-bundle: building here (needs Myriad's dependencies, see tools/setup.sh)"
  "$root/tools/build.sh" "$root/build-gpu" -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
    -DMYRIAD_BUILD_BENCHMARKS=OFF -- myriad myriad_ops_gpu_tests myriad_kernels_gpu_tests \
    myriad_collectives_gpu_tests myriad_cublaslt_loader_tests
  bin="$root/build-gpu/bin"
  mkdir -p "$bin"
  ln -sf "$root/build-gpu/tools/myriad" "$root"/build-gpu/tests/myriad_{ops,kernels,collectives}_gpu_tests \
    "$root/build-gpu/tests/myriad_cublaslt_loader_tests" "$bin/"
fi
# CUDA 13's runtime, cuBLASLt and NCCL: the toolkit's, or the Python wheels'.
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  $(python3 -c 'import glob, site; print(" ".join(glob.glob(site.getsitepackages()[0] + "/nvidia/*/lib")))' 2>/dev/null); do
  [[ -d $dir ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
done
export MYRIAD_PRESET_PATH="$root/scenarios"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv \
  >"$out/device.csv" 2>&1 || true
cat "$out/device.csv"

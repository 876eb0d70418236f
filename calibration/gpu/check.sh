#!/usr/bin/env bash
# The GPU correctness check: the `gpu` tests (the CUDA kernels against the CPU
# backend, the NCCL executor against the thread executor, the device probe) and
# the cuBLASLt loader finding the image's library. gtest's JSON for each lands
# in $OUT (default gpu-out/). Kernel speed against the ceilings comes from the
# calibration loop's rows (calibrate.sh; summarize.py here).
#   here:       calibration/gpu/bundle.sh
#   on the GPU: OUT=$OUT bash calibration/gpu/check.sh      (carry .gpu-bundle)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
status=0
for t in myriad_ops_gpu_tests myriad_collectives_gpu_tests myriad_kernels_gpu_tests; do
  echo "== $t"
  timeout "${MYRIAD_TEST_TIMEOUT:-90}" "$bin/$t" --gtest_output="json:$out/${t#myriad_}.json" ||
    status=1
done
echo "== myriad_cublaslt_loader_tests"
timeout 30 "$bin/myriad_cublaslt_loader_tests" || status=1
exit $status

#!/usr/bin/env bash
# Out-of-bounds accesses, races and uninitialized reads in our CUDA kernels: the
# kernel tests again under compute-sanitizer (memcheck, racecheck, initcheck),
# where the machine has it, each bounded by MYRIAD_SANITIZER_TIMEOUT seconds.
#   here:       calibration/gpu/bundle.sh
#   on the GPU: OUT=$OUT bash calibration/gpu/sanitize.sh      (carry .gpu-bundle)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
sanitizer=$(command -v compute-sanitizer ||
  ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
    2>/dev/null | head -1)
if [[ -z $sanitizer ]]; then
  echo "== compute-sanitizer: not on this machine, skipped"
  exit 0
fi
status=0
for tool in memcheck racecheck initcheck; do
  echo "== compute-sanitizer --tool $tool myriad_ops_gpu_tests"
  timeout "${MYRIAD_SANITIZER_TIMEOUT:-120}" "$sanitizer" --tool "$tool" --error-exitcode 3 \
    "$bin/myriad_ops_gpu_tests" --gtest_brief=1 || status=1
done
exit $status

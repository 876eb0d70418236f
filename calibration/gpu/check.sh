#!/usr/bin/env bash
# Issue 5's check on a GPU (about 5 minutes on an H200): the `gpu` tests (CUDA
# kernels and the NCCL executor against the CPU backend), then every CUDA kernel
# and collective (the NCCL executor; on one GPU its device-copy transport)
# timed by `myriad calibrate --backend cuda`, and a table of achieved TFLOP/s or
# GB/s against the ceilings measured first (an 8192^3 bf16 cuBLASLt GEMM, a 1 GiB
# device-to-device copy), with the issue's targets marked. Everything lands in
# $OUT (default gpu-out/): device.csv, *-tests.json, calibrate/rows.json,
# summary.txt, summary.json.
#   here:       calibration/gpu/bundle.sh
#   on the GPU: OUT=$OUT bash calibration/gpu/check.sh      (carry .gpu-bundle)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
status=0
for t in myriad_ops_gpu_tests myriad_kernels_gpu_tests; do
  echo "== $t"
  timeout 120 "$bin/$t" --gtest_output="json:$out/$t.json" || status=1
done
echo "== timing every kernel"
timeout 300 "$bin/myriad" calibrate --backend cuda --out "$out/calibrate" || status=1
if [[ -f $out/calibrate/rows.json ]]; then
  python3 "$root/calibration/gpu/summarize.py" "$out/calibrate/rows.json" --json "$out/summary.json" |
    tee "$out/summary.txt" || status=1
fi
exit $status

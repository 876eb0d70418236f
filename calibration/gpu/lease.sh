#!/usr/bin/env bash
# Everything a lent GPU is for, in one call (device time is short), most needed
# first, each step bounded so that the call ends inside LEASE_SECONDS (default
# 560, for a run with timeout_s 600): the GPU tests (check.sh), the calibration
# loop (calibrate.sh), then the kernel tests under compute-sanitizer
# (sanitize.sh) with what time is left. $OUT gets log.txt, device.csv, the three
# test reports and loop/{rows,profile,check}.json: eight files, what the device
# tool brings back.
#   here:       calibration/gpu/bundle.sh
#   device run: OUT=$OUT bash calibration/gpu/lease.sh     (carry .gpu-bundle; timeout_s 600)
set -uo pipefail
here=$(dirname "$0")
out=${OUT:-gpu-out}
mkdir -p "$out"
deadline=$((SECONDS + ${LEASE_SECONDS:-560}))
left() { echo $((deadline - SECONDS > 0 ? deadline - SECONDS : 1)); }
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  status=0
  MYRIAD_TEST_TIMEOUT=${MYRIAD_TEST_TIMEOUT:-75} bash "$here/check.sh" || status=1
  loop=$(($(left) - 60))  # a minute kept for the sanitizer
  MYRIAD_LOOP_TIMEOUT=$((loop > 60 ? loop : 60)) bash "$here/calibrate.sh" || status=1
  MYRIAD_SANITIZER_TIMEOUT=$(($(left) / 3)) bash "$here/sanitize.sh" || status=1
  date -u +%Y-%m-%dT%H:%M:%SZ
  echo "lease.sh: exit $status"
} 2>&1 | tee "$out/log.txt"

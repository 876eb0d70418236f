#!/usr/bin/env bash
# Everything a lent GPU is for, in one call (device time is short): the GPU
# tests (check.sh), then the calibration loop (calibrate.sh), each bounded so
# that the call ends inside its limit. $OUT gets log.txt, device.csv, the three
# test reports and loop/{rows,profile,check}.json: eight files, what the device
# tool brings back.
#   here:       calibration/gpu/bundle.sh
#   device run: OUT=$OUT bash calibration/gpu/lease.sh     (carry .gpu-bundle; timeout_s 600)
set -uo pipefail
here=$(dirname "$0")
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  status=0
  MYRIAD_TEST_TIMEOUT=${MYRIAD_TEST_TIMEOUT:-75} bash "$here/check.sh" || status=1
  MYRIAD_LOOP_TIMEOUT=${MYRIAD_LOOP_TIMEOUT:-330} bash "$here/calibrate.sh" || status=1
  date -u +%Y-%m-%dT%H:%M:%SZ
  echo "lease.sh: exit $status"
} 2>&1 | tee "$out/log.txt"

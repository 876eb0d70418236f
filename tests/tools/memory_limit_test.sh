#!/usr/bin/env bash
# Every verb on every shipped example under a 4 GB address-space limit ends
# without a signal: it finishes, or fails with a message and exit 1 or 2. Every
# replica of the largest example (12,288 GPUs) must finish.
#   memory_limit_test.sh MYRIAD SOURCE_DIR WORK_DIR
set -uo pipefail
myriad=$1
src=$2
work=$3
mkdir -p "$work"
ulimit -v 4194304  # KiB: 4 GiB
failed=0
run() {
  "$myriad" "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ "$rc" -ge 128 ] || [ "$rc" -gt 2 ]; then
    echo "signal or bad exit $rc: myriad $*" >&2
    tail -5 "$work/err.txt" >&2
    failed=1
  fi
  return 0
}
for example in "$src"/scenarios/examples/*.yaml; do
  run check "$example"
  run estimate "$example"
  run simulate "$example"
  run campaign "$example" --days 1 --seeds 3 --threads 2
done
run validate
m="$src/calibration/measurements/H200-2026-11-30"
run calibrate fit "$m/rows.json" --base "$src/calibration/profiles/H200.json" \
  --out "$work/profile.json"
run calibrate check --profile "$m/profile.json" --measured-from "$m/check-first-fit.json"
"$myriad" simulate "$src/scenarios/examples/gpt3-175b-megascale-12288.yaml" --all-replicas \
  >"$work/out.txt" 2>"$work/err.txt"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "every replica at 12,288 GPUs under 4 GB: exit $rc" >&2
  tail -5 "$work/err.txt" >&2
  failed=1
fi
[ "$failed" -eq 0 ] && echo "memory limit ok"
exit "$failed"

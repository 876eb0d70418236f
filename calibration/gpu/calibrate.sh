#!/usr/bin/env bash
# The calibration loop on a GPU: measure the CUDA kernels and collectives, fit a
# profile whose datasheet peaks, tiles and network figures come from the
# shipped profile of the same GPU (--base), predict the layer composites from it
# and time them; then the achieved rates against the run's ceilings. Writes
# $OUT/loop/{rows,profile,check}.json; commit the profile as
# calibration/profiles/<GPU>-measured.json with the check report.
#   here:       calibration/gpu/bundle.sh
#   on the GPU: OUT=$OUT bash calibration/gpu/calibrate.sh [BASE_PROFILE]   (carry .gpu-bundle)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
base=${1:-"$root/calibration/profiles/H200.json"}
# A kernel that fails is left out of the fit and named in the profile; the loop
# still exits 1.
timeout "${MYRIAD_LOOP_TIMEOUT:-480}" "$bin/myriad" calibrate loop --backend cuda --base "$base" \
  --out "$out/loop" --repetitions "${MYRIAD_REPETITIONS:-3}" --max-error 0.05 --leave-out-failed
status=$?
if [[ -f $out/loop/rows.json ]]; then
  python3 "$root/calibration/gpu/summarize.py" "$out/loop/rows.json" || status=1
fi
exit $status

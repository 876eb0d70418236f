#!/usr/bin/env bash
# Issue 6's loop on a GPU (about 6 minutes on an H200): measure the CUDA kernels,
# fit a profile whose datasheet peaks, tiles and network figures come from the
# shipped profile of the same GPU (--base), predict the layer composites from it
# and time them. Writes $OUT/loop/{rows,profile,check}.json; commit the profile as
# calibration/profiles/<GPU>-measured.json with the check report.
#   here:       calibration/gpu/bundle.sh
#   on the GPU: OUT=$OUT bash calibration/gpu/calibrate.sh [BASE_PROFILE]   (carry .gpu-bundle)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
base=${1:-"$root/calibration/profiles/H200.json"}
timeout 480 "$bin/myriad" calibrate loop --backend cuda --base "$base" --out "$out/loop" \
  --max-error 0.05

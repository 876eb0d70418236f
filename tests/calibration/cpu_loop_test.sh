#!/usr/bin/env bash
# The CPU calibration loop end to end (calibration/README.md): measure the small grid, fit a
# profile, predict the composite workloads and time them; the mean composite
# error must stay within 10%. Then the fitted profile is accepted, unchanged, by
# `estimate` and `simulate`.
#   cpu_loop_test.sh MYRIAD SCENARIO_DIR OUT_DIR
set -euo pipefail
myriad=$1
scenarios=$2
out=$3
# A shared machine slows a measurement for seconds at a time (another build, a
# neighbour's job): the loop keeps the fastest of samples taken a pass apart, times
# the composites in the same passes as the kernels, and a loop that still misses
# the bound is run again, up to three times, each attempt printed. A model that
# is wrong misses every time.
for attempt in 1 2 3; do
  rm -rf "$out"
  if "$myriad" calibrate loop --out "$out" --max-error 0.10; then break; fi
  if ((attempt == 3)); then
    echo "the composite error exceeded 10% in three loops" >&2
    exit 1
  fi
  echo "attempt $attempt missed the 10% bound; measuring again" >&2
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
rows = json.load(open(f"{out}/rows.json"))
assert rows["format"] == "myriad-calibration-rows/2", rows["format"]
assert all(r["check"] == "pass" for r in rows["rows"])
kinds = {r["kind"] for r in rows["rows"]}
assert kinds == {"ceiling", "kernel", "collective"}, kinds
assert rows["environment"]["commit"], "no commit recorded"
profile = json.load(open(f"{out}/profile.json"))
measured = [k for k, p in profile["parameters"].items() if p["origin"] == "measured"]
assert "gemm_efficiency" in measured and "kernel_overhead_s" in measured, measured
# The loop describes the attention kernel its composites run.
for p in ("attention_fwd_efficiency", "attention_bwd_efficiency"):
    assert profile["parameters"][p]["note"].endswith("as asked: attention"), profile["parameters"][p]
check = json.load(open(f"{out}/check.json"))
assert len(check["composites"]) >= 3
print(f"composite error: mean {check['composite_mean_abs_error']:.1%}, "
      f"max {check['composite_max_abs_error']:.1%}")
PY
example="$scenarios/examples/megatron-175b-selene-64.yaml"
"$myriad" estimate "$example" --profile "$out/profile.json" --json "$out/estimate.json" >/dev/null
"$myriad" simulate "$example" --profile "$out/profile.json" --json "$out/simulate.json" >/dev/null
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
e = json.load(open(f"{out}/estimate.json"))
s = json.load(open(f"{out}/simulate.json"))
assert e["step_time_s"] > 0 and s["step_time_s"] > 0
print(f"estimate and simulate accept the fitted profile: step {e['step_time_s']:.1f} s, "
      f"simulated {s['step_time_s']:.1f} s")
PY
echo "calibration loop ok"

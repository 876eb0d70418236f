#!/usr/bin/env bash
# The two engines side by side on every shipped example: as shipped, and with the fat
# tree's first tier at 3:1 (what `simulate` plays against what `estimate` assumes).
# Usage: tools/engines_agree.sh [build/tools/myriad]
set -euo pipefail
cd "$(dirname "$0")/.."
myriad=${1:-build/tools/myriad}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-36s %-8s %10s %10s %8s\n' example tier0 estimate simulate sim-est
for f in scenarios/examples/*.yaml; do
  name=$(basename "$f" .yaml)
  for tier in shipped 3:1; do
    set=()
    [[ $tier == shipped ]] || set=(--set "cluster.network.tiers.0.oversubscription=$tier")
    "$myriad" simulate "$f" "${set[@]}" --json "$out/r.json" > /dev/null
    python3 - "$out/r.json" "$name" "$tier" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
est, sim = d["analytic_step_time_s"], d["step_time_s"]
print(f"{sys.argv[2]:36s} {sys.argv[3]:8s} {est:9.3f}s {sim:9.3f}s {100 * (sim / est - 1):+7.2f}%")
PY
  done
done

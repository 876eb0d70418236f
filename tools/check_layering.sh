#!/usr/bin/env bash
# Checks that includes follow the layering in ARCHITECTURE.md:
#   models <- kernels <- sim <- calibration <- tools
# and, inside sim, that each part reaches only the parts below it:
#   cost, engine <- topology, analytic <- program <- step;  cost, analytic <- campaign, planning;
#   cost, analytic, program <- chakra (Chakra execution traces of the step program)
# (step and campaign are siblings: what both need lives below them, as the
# random streams do in models/random). The build enforces the first rule for
# headers through each library's include view (cmake/MyriadLayering.cmake);
# this script states both rules in one place and runs without a build. It also
# keeps SimGrid behind the engines' implementations (no public header needs it).
#   tools/check_layering.sh        prints each violation as file:line, exits 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A layer=([models]=0 [kernels]=1 [sim]=2 [calibration]=3 [tools]=4)
# What each part of sim may include from sim, besides itself.
declare -A sim_allowed=(
  [cost]=""
  [engine]=""
  [topology]="cost"
  [analytic]="cost"
  [program]="cost analytic"
  [step]="cost engine topology analytic program"
  [campaign]="cost analytic"
  [stage_split]="cost analytic"
  [planning]="cost analytic stage_split"
  [chakra]="cost analytic program"
)

status=0
fail() {
  echo "$1: $2" >&2
  status=1
}

while IFS= read -r file; do
  top=${file%%/*}
  [[ -n ${layer[$top]:-} && -f $file ]] || continue
  part=${file#*/}
  part=${part%%/*}
  while IFS=: read -r line target; do
    to_top=${target%%/*}
    [[ -n ${layer[$to_top]:-} ]] || continue
    if ((layer[$to_top] > layer[$top])); then
      fail "$file:$line" "$top may not include $target ($to_top is above it)"
      continue
    fi
    if [[ $top == sim && $to_top == sim && -n ${sim_allowed[$part]+set} ]]; then
      to_part=${target#sim/}
      to_part=${to_part%%/*}
      [[ $to_part == "$part" ]] && continue
      if [[ " ${sim_allowed[$part]} " != *" $to_part "* ]]; then
        fail "$file:$line" "sim/$part may not include $target (sim/$part reaches only: ${sim_allowed[$part]:-itself})"
      fi
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$file" |
    sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1:\2/')
done < <(git ls-files -- 'models/*' 'kernels/*' 'sim/*' 'calibration/*' 'tools/*' |
  grep -E '\.(hpp|cpp|h|cu|cuh)$')

# SimGrid stays behind the engines' implementations: the files that may include
# it (and the one header, the platform's, that the step engine's sources share).
simgrid_allowed='^(sim/engine/[^/]+\.cpp|sim/step/[^/]+\.cpp|sim/step/step_actors\.hpp|sim/topology/fat_tree_platform\.(hpp|cpp))$'
while IFS=: read -r file line _; do
  [[ $file =~ $simgrid_allowed ]] && continue
  fail "$file:$line" "includes SimGrid; only the engines' sources and sim/topology may"
done < <(git grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<(simgrid|xbt)' \
  -- models kernels sim calibration tools || true)

# Every part of sim must be listed above, so a new one is placed deliberately.
for dir in sim/*/; do
  part=$(basename "$dir")
  if [[ -z ${sim_allowed[$part]+set} ]]; then
    fail "$dir" "a part of sim that tools/check_layering.sh does not place; add it to sim_allowed"
  fi
done

if ((status == 0)); then echo "layering: clean"; fi
exit $status

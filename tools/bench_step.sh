#!/usr/bin/env bash
# The step engine's speed and memory where every replica is simulated, against
# its targets: wall time and peak resident memory of `myriad simulate` on the
# scenarios in scenarios/bench/ and the default example with --all-replicas.
#   tools/bench_step.sh [BUILD_DIR]       (builds `myriad` there first; default build/)
# Prints a table; exits 0 whatever the figures (a benchmark, not a test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
"$root/tools/build.sh" "$build" -- myriad >/dev/null
myriad="$build/tools/myriad"
command -v /usr/bin/time >/dev/null || {
  echo "bench_step: needs /usr/bin/time (Debian package time)" >&2
  exit 2
}

# scenario | options | target wall s | target peak MB
cases=(
  "scenarios/bench/gpt3-175b-12288-1to3-stragglers.yaml||5|500"
  "scenarios/bench/llama3-405b-h100-131072-stragglers.yaml||10|2000"
  "scenarios/bench/gpt3-175b-4096-1to3.yaml||2|"
  "scenarios/bench/megascale-moe-352b-11520-3to1.yaml||2|"
  "scenarios/examples/gpt3-175b-megascale-12288.yaml|--all-replicas||"
  "scenarios/examples/deepseek-v3-h800-2048.yaml|||"
  "scenarios/bench/deepseek-v3-h800-16384.yaml|||"
  "scenarios/bench/kimi-k2-h800-2048.yaml|||"
  "scenarios/bench/qwen3-235b-h100-256.yaml|||"
  "scenarios/bench/llama4-maverick-h100-512.yaml|||"
)
printf '%-52s %-15s %10s %9s %10s %9s %9s\n' scenario options "step s" "wall s" "target s" "peak MB" "target"
for c in "${cases[@]}"; do
  IFS='|' read -r scenario options target_s target_mb <<<"$c"
  log=$(mktemp)
  # shellcheck disable=SC2086  # options is a word list
  /usr/bin/time -f 'BENCH %e %M' "$myriad" simulate "$root/$scenario" $options >"$log" 2>&1 || {
    echo "bench_step: $scenario failed:" >&2
    tail -5 "$log" >&2
    rm -f "$log"
    exit 1
  }
  read -r wall kb < <(grep '^BENCH' "$log" | awk '{print $2, $3}')
  step=$(grep -m1 'step time' "$log" | awk '{print $3}')
  rm -f "$log"
  printf '%-52s %-15s %10s %9s %10s %9.0f %9s\n' "$(basename "$scenario")" "${options:--}" "$step" \
    "$wall" "${target_s:--}" "$(echo "$kb / 1024" | bc -l)" "${target_mb:--}"
done
echo "($(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $("$myriad" --version | head -1))"

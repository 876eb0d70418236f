#!/usr/bin/env bash
# Instructions per estimate, counted by callgrind: a figure the shared machine's
# load does not move (wall times on it vary by 1.5x from hour to hour), to compare
# two builds of the analytic engine. Runs each benchmark of
# BUILD_DIR/sim/myriad_estimate_benchmark named on the command line (default: the
# full and summary estimates of every preset) under valgrind, counting only
# inside myriad::sim::estimate, and divides by the estimates it made (its calls
# of models::plan_step, once per estimate). Without BUILD_DIR it builds this
# checkout's build/ first; a BUILD_DIR given (another checkout's, to compare) is
# used as it is.
#   tools/bench_instructions.sh [BUILD_DIR] [BENCHMARK...]
# Prints a table; exits 0 whatever the figures (a benchmark, not a test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if (($# > 0)); then
  build=$1
  shift
else
  build="$root/build"
  "$root/tools/build.sh" "$build" -- myriad_estimate_benchmark >/dev/null
fi
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
  echo "bench_instructions: needs valgrind (Debian package valgrind)" >&2
  exit 2
}
bench="$build/sim/myriad_estimate_benchmark"
[[ -x $bench ]] || {
  echo "bench_instructions: no $bench (build the target myriad_estimate_benchmark there)" >&2
  exit 2
}
names=("$@")
if ((${#names[@]} == 0)); then
  mapfile -t names < <("$bench" --benchmark_list_tests | grep '^BM_Estimate')
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-34s %14s %10s\n' benchmark "instr/estimate" estimates
for name in "${names[@]}"; do
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" --collect-atstart=no \
    "--toggle-collect=myriad::sim::estimate(*" "$bench" --benchmark_filter="^${name}\$" \
    --benchmark_min_time=0.3 >"$out/log" 2>&1
  python3 - "$out/cg.out" "$name" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
total = next(int(l.split()[1]) for l in lines if l.startswith("totals:") or l.startswith("summary:"))
names, calls = {}, 0
for i, line in enumerate(lines):
    m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
    if not m:
        continue
    if m.group(2):
        names[m.group(1)] = m.group(2)
    if line.startswith("cfn") and names.get(m.group(1), "").startswith("myriad::models::plan_step("):
        calls += int(lines[i + 1].split()[0].split("=")[1])
if calls == 0:
    sys.exit(f"bench_instructions: {sys.argv[2]} made no estimate")
print(f"{sys.argv[2]:<34} {total / calls:14,.0f} {calls:10}")
PY
done

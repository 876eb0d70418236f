#!/usr/bin/env bash
# ctest: writes each kind of HTML report with the myriad command (a sweep, a plan, a
# campaign, a simulated step), then opens them in headless Chromium
# (report_browser_test.mjs). Exit 77 (skipped) without Node.js, Chromium or the
# report's npm packages, which tools/setup.sh installs.
#   run_browser_test.sh MYRIAD REPORT_DIR SCENARIO_DIR OUT_DIR
set -euo pipefail
myriad=$1 report_dir=$2 scenarios=$3 out=$4
command -v node >/dev/null || { echo "SKIP: no Node.js (tools/setup.sh installs it)"; exit 77; }
[[ -f $report_dir/node_modules/vega-lite/build/vega-lite.min.js ]] ||
  { echo "SKIP: the report's npm packages are not installed (tools/setup.sh)"; exit 77; }
mkdir -p "$out"
examples=$scenarios/examples
"$myriad" sweep "$examples/llama3-70b-h100-2048.yaml" --set training.precision=bf16 \
  --set cluster.price_per_gpu_hour=2 --vary cluster.gpus=4096,8192 --vary parallelism.tp=4,8 \
  --vary parallelism.pp=2,4,8 --vary parallelism.virtual_stages=1,5 --pareto days,cost \
  --report "$out/sweep.html" >/dev/null
"$myriad" plan "$examples/mixtral-8x7b-h100-64.yaml" --top 5 --report "$out/plan.html" >/dev/null
"$myriad" campaign "$examples/llama3-405b-h100-16384-campaign.yaml" --seeds 3 --set cluster.price_per_gpu_hour=2.5 \
  --report "$out/campaign.html" >/dev/null
"$myriad" campaign "$examples/llama3-405b-h100-16384-campaign.yaml" --seeds 3 --days 30 \
  --set cluster.price_per_gpu_hour=2.5 --report "$out/campaign-days.html" >/dev/null 2>&1
"$myriad" campaign "$examples/llama3-405b-h100-16384-campaign.yaml" --seeds 3 --days 30 \
  --vary faults.rate_scale=0.5,1,2 --report "$out/sensitivity.html" >/dev/null 2>&1
"$myriad" simulate "$examples/megatron-175b-selene-64.yaml" --report "$out/step.html" >/dev/null
exec node "$(dirname "$0")/report_browser_test.mjs" "$report_dir" "$out" \
  configurations="$out/sweep.html" configurations="$out/plan.html" \
  campaign="$out/campaign.html" campaign-days="$out/campaign-days.html" sensitivity="$out/sensitivity.html" step="$out/step.html"

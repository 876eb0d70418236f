#!/usr/bin/env bash
# Sets everything up and runs Myriad's main job on the default example: a
# GPT-3 175B job on a MegaScale-like 12,288-GPU cluster.
#   tools/quickstart.sh [SCENARIO]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:-"$root/scenarios/examples/gpt3-175b-megascale-12288.yaml"}
"$root/tools/setup.sh"
"$root/tools/build.sh" "$root/build" -- myriad  # the configuration tools/test.sh uses
exec "$root/build/tools/myriad" estimate "$scenario"

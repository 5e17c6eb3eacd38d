#!/usr/bin/env bash
# The main job on the embedded defaults: set up, build, and run Doppler on the
# LLaMA-block example, printing a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" doppler-opt >"$root/build.log" 2>&1 || { tail -n 60 "$root/build.log"; exit 1; }
example=${1:-$root/examples/llama_block.mlir}
"$build/bin/doppler-opt" "$example" --doppler-work-summary -o /dev/null

#!/usr/bin/env bash
# The main job on the embedded defaults: set up, build, then run the whole
# Doppler pipeline (costs, decomposition, placement, transfers, simulation)
# on the LLaMA-block example for 4 H100s, print the summary, and write the
# placed IR, a Chrome trace (open in ui.perfetto.dev), an SVG Gantt chart
# and a Graphviz graph to out/.
#   bash scripts/demo.sh [EXAMPLE.mlir] [PIPELINE OPTIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
out=${DOPPLER_OUT_DIR:-$root/out}
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" doppler-opt doppler-translate >"$root/build.log" 2>&1 ||
  { tail -n 60 "$root/build.log"; exit 1; }

example=${1:-$root/examples/llama_block.mlir}
options=${2:-system=h100x4 devices=4}
name=$(basename "$example" .mlir)
mkdir -p "$out"
bin=$build/bin

echo "== $name: work"
"$bin/doppler-opt" "$example" --doppler-work-summary -o /dev/null
echo "== $name: doppler-pipeline{$options}"
"$bin/doppler-opt" "$example" --doppler-pipeline="$options" \
  --mlir-print-op-on-diagnostic=false -o "$out/$name.placed.mlir" 2>&1 |
  grep -E "remark|error" | sed -e 's/^[^ ]*: remark: /  /'
# The same pipeline with the critical-path heuristic, for comparison.
baseline=$("$bin/doppler-opt" "$example" --doppler-pipeline="$options policy=critical-path" \
  --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep -o "predicted makespan [0-9.e+]*" || true)
echo "  (critical-path heuristic instead: $baseline)"
"$bin/doppler-translate" --export-chrome-trace "$out/$name.placed.mlir" -o "$out/$name.trace.json"
"$bin/doppler-translate" --export-svg-gantt "$out/$name.placed.mlir" -o "$out/$name.gantt.svg"
"$bin/doppler-translate" --export-dot "$out/$name.placed.mlir" -o "$out/$name.dot"
ops=$(grep -c "doppler.device = " "$out/$name.placed.mlir" || true)
transfers=$(grep -c "doppler.transfer " "$out/$name.placed.mlir" || true)
echo "  $ops placed ops, $transfers of them transfers (times in microseconds)"
echo "== wrote"
for f in placed.mlir trace.json gantt.svg dot; do echo "  $out/$name.$f"; done

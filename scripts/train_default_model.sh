#!/usr/bin/env bash
# Trains the default placement model that libDopplerLearning.so embeds
# (models/doppler-default.pt), reproducibly: the same build and seeds give
# the same model (LibTorch runs single-threaded; every random draw is
# seeded).
#
# It trains on generated graphs of three families only (chain matmuls,
# FFNNs, transformer blocks and layers; costs from FLOPs and bytes over
# H100-like rates with link rates from PCIe to NVLink class), for 2 to 8
# devices -- never on the graphs in shared/data, which stay for evaluation,
# nor on the fourth family, random layered DAGs, held out to judge the
# model on graphs unlike its own (`doppler-train --compare default
# --generate 100 --generate-seed 99 --generate-families random`).
#
# It then trains the move model of --policy learned-moves (LearnedMoves.h,
# compiled into lib/Placement/Learning/LearnedMovesModel.inc) on the
# training split of the real programs (docs/Method.md section 10; the
# held-out programs are never read), if scripts/real_programs.py has made
# them; a few seconds, deterministic (seed 0).
#
# usage: scripts/train_default_model.sh [--moves-only] [BUILD_DIR] [OUTPUT_MODEL]
#   --moves-only  train the move model only
#   BUILD_DIR     a configured build with doppler-train (default: build)
#   OUTPUT_MODEL  default: models/doppler-default.pt
# Rebuild afterwards (ninja DopplerLearning DopplerLearningLoader) to embed
# the new models.
#
# Wall time: about 5 minutes on 2 shared cores (models/README.md).
set -euo pipefail

moves_only=0
if [[ "${1:-}" == "--moves-only" ]]; then
  moves_only=1
  shift
fi

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
output=${2:-"$root/models/doppler-default.pt"}
train="$build/bin/doppler-train"
[[ -x "$train" ]] || { echo "error: $train not found (build doppler-train first)" >&2; exit 1; }

mkdir -p "$(dirname "$output")"
log="$build/doppler-default.train.jsonl"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

train_moves() {
  local cache="$build/real-programs" graphs devices
  if [[ ! -f "$cache/manifest.json" ]]; then
    echo "no $cache/manifest.json: run scripts/real_programs.py to train the move model" >&2
    return 0
  fi
  # The training split's default-pipeline graphs, each on its own count.
  graphs=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
g = [e for e in m["graphs"] if e["split"] == "train" and not e.get("uniform")]
print(" ".join(sys.argv[1] + "/" + e["path"] for e in g))
print(",".join(str(e["devices"]) for e in g))' "$cache")
  devices=$(echo "$graphs" | tail -1)
  # shellcheck disable=SC2046
  "$train" --moves train $(echo "$graphs" | head -1) --devices "$devices" \
    --moves-rounds 40 --moves-per-round 64 --seed 0 \
    -o "$root/lib/Placement/Learning/LearnedMovesModel.inc"
}

if (( moves_only )); then
  train_moves
  exit 0
fi

start=$(date +%s)
# The architecture has the heuristic priors (ModelConfig::heuristicPrior),
# the join split with its join-aware prior (join=1) and the completions
# with their lookahead prior (lookahead=1): stage 1 imitates the
# critical-path heuristic's exact choices (the join prior and the
# completions left out), stage 2 is REINFORCE on the simulator (sampled
# actions, 8 episodes per update, the heuristic's cost as each graph's
# first baseline), the join prior started at the best of 4 values and the
# lookahead prior at the best of 5 by the greedy placements. Every 500
# episodes the greedy policy is evaluated on 128 (graph, devices) pairs of
# the training set; the output is the evaluation with the smallest mean log
# ratio to the better of the two heuristics on each pair, losses counted
# three times (--regression-weight 3).
"$train" \
  --generate 150 --generate-seed 20261 --generate-max-nodes 240 \
  --generate-families chain,ffnn,transformer \
  --devices 2-8 \
  --stages il,sim-rl --episodes 4000,3000 \
  --lr 1e-3,1e-3 --epsilon 1.0,0 --sample-actions \
  --episodes-per-update 1,8 --critical-path-baseline \
  --architecture slim,join=1,lookahead=1 --regression-weight 3 \
  --seed 7 \
  --evaluate-every 500 --evaluation-pairs 128 \
  --checkpoint "$work/default.ckpt" --checkpoint-every 2000 \
  --log "$log" --no-progress \
  -o "$output"
end=$(date +%s)
echo "wall time: $((end - start)) s"
ls -l "$output"
train_moves

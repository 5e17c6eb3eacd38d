#!/usr/bin/env bash
# Per-graph training (the paper's setting): one policy per graph, imitation
# of the critical-path heuristic then REINFORCE on the simulator, and the
# trained policy's greedy placement and the best placement any training
# episode simulated (--best-placement, the paper's figure), against the
# heuristic.
#
# The recipe (models/README.md has what it gives on shared/data):
#   --architecture slim,join=1,lookahead=1
#                                the join-split device feature and a prior
#                                on the join-aware device, the completion
#                                makespans and a prior on the shortest,
#                                which only RL moves (DualPolicy.h,
#                                ModelConfig)
#   --episodes 200,1000          imitation reaches the teacher in about 200
#                                episodes; longer imitation sharpens the
#                                network so much that RL cannot leave it;
#                                on the shared graphs the best placement
#                                of a run came by RL episode 260 (-e
#                                changes the counts)
#   --prior-lr-scale 300         the priors learn 300x faster in RL
#   --sample-actions --epsilon 1.0,0 --lr 1e-3,1e-3
#   --episodes-per-update 1,8
#
# usage: scripts/train_per_graph.sh [-b BUILD_DIR] [-d DEVICES] [-s SEED]
#                                   [-e IL,RL] [-o OUT_DIR] GRAPH...
#   GRAPH: reference .txt or .mlir files. Models, logs and a summary line
#   per graph go to OUT_DIR (default: out/per-graph).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
devices=4
seed=1
episodes=200,1000
out="$root/out/per-graph"
while getopts "b:d:s:e:o:" flag; do
  case "$flag" in
    b) build=$OPTARG ;;
    d) devices=$OPTARG ;;
    s) seed=$OPTARG ;;
    e) episodes=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -eq 0 ]]; then
  echo "usage: $0 [-b BUILD_DIR] [-d DEVICES] [-s SEED] [-e IL,RL] [-o OUT_DIR] GRAPH..." >&2
  exit 2
fi
train="$build/bin/doppler-train"
place="$build/bin/doppler-place"
for tool in "$train" "$place"; do
  [[ -x "$tool" ]] || { echo "error: $tool not found (build it first)" >&2; exit 1; }
done
mkdir -p "$out"

makespan() { # GRAPH ARGS... -> the simulated makespan of that placement
  local graph=$1
  shift
  "$place" "$graph" --devices "$devices" --json "$@" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["makespan"])'
}

for graph in "$@"; do
  name=$(basename "${graph%.*}")
  model="$out/$name.d$devices.s$seed.pt"
  start=$(date +%s.%N)
  "$train" "$graph" --devices "$devices" \
    --architecture slim,join=1,lookahead=1 \
    --stages il,sim-rl --episodes "$episodes" \
    --lr 1e-3,1e-3 --epsilon 1.0,0 --sample-actions \
    --episodes-per-update 1,8 --prior-lr-scale 300 \
    --seed "$seed" --evaluate-every 250 \
    --log "$out/$name.d$devices.s$seed.jsonl" --no-progress \
    --best-placement "$out/$name.d$devices.s$seed.best.txt" \
    -o "$model" > "$out/$name.d$devices.s$seed.out"
  end=$(date +%s.%N)
  learned=$(makespan "$graph" --policy doppler --model "$model" --budget-evaluations 0)
  best=$(makespan "$graph" --assignment "$out/$name.d$devices.s$seed.best.txt")
  heuristic=$(makespan "$graph" --policy critical-path)
  python3 - "$name" "$learned" "$best" "$heuristic" "$start" "$end" <<'EOF'
import sys
name, learned, best, heuristic, start, end = sys.argv[1:]
learned, best, heuristic = float(learned), float(best), float(heuristic)
print(f"{name}: greedy {learned:.6g}, best seen in training {best:.6g}, "
      f"critical path {heuristic:.6g} (greedy x{learned / heuristic:.4f}, "
      f"best x{best / heuristic:.4f}), trained in "
      f"{float(end) - float(start):.0f} s")
EOF
done

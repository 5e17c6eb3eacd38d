#!/usr/bin/env bash
# Byte-compares what two builds of Doppler produce on the same inputs: the
# placed IR of the examples (doppler-pipeline), the LLVM IR of
# doppler-lower-to-runtime (both argument placements), runtime plans
# (doppler-run --export-plan), doppler-place's JSON for every policy on the
# shared graphs at D = 2, 4, 8, and imported reference graphs placed and
# simulated. Timings in the JSON are masked. For refactorings that must not
# change behaviour:
#
#   git worktree add /tmp/base <commit> && DOPPLER_BUILD_DIR=/tmp/base/build bash /tmp/base/scripts/build.sh
#   scripts/compare_outputs.sh /tmp/base/build/bin build/bin
#
# Prints one line per case ("same: NAME" or "DIFF: NAME" and the first lines
# of the diff) and exits 1 if any case differs.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if (($# != 2)); then echo "usage: $0 BASE_BIN_DIR NEW_BIN_DIR" >&2; exit 2; fi
bins=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
ex=$root/examples; graphs=${DOPPLER_SHARED_DATA_DIR:-$root/data/reference}/graphs
differ=0
run() { # name cmd...   (cmd uses $B for the bin dir, $O for the output dir)
  local name=$1; shift
  for side in base main; do
    mkdir -p $out/$side/$name
    local bin=${bins[0]}; [[ $side == main ]] && bin=${bins[1]}
    B=$bin O=$out/$side/$name bash -c "$*" > $out/$side/$name/stdout 2> $out/$side/$name/stderr
    echo "exit $?" >> $out/$side/$name/stdout
    sed -i -E 's/"seconds":[0-9.e+-]+/"seconds":T/g; s/"(wall|elapsed)[a-z_]*":[0-9.e+-]+/"\1":T/g' $out/$side/$name/stdout
  done
  if diff -rq $out/base/$name $out/main/$name > /dev/null; then echo "same: $name"; else echo "DIFF: $name"; diff -r $out/base/$name $out/main/$name | head -5; differ=1; fi
}
for e in mlp matmul_chain llama_block; do
  for d in 2 4; do
    run pipe-$e-$d '$B/doppler-opt '$ex/$e.mlir' --doppler-pipeline="devices='$d'" -o $O/pipe-'$e'-'$d'.mlir'
    run pipecpu-$e-$d '$B/doppler-opt '$ex/$e.mlir' --doppler-pipeline="system=cpu4 devices='$d' policy=critical-path" -o $O/cpu-'$e'-'$d'.mlir && $B/doppler-opt $O/cpu-'$e'-'$d'.mlir --doppler-lower-to-runtime="entry=main" -o $O/lowered-'$e'-'$d'.mlir && $B/doppler-run $O/cpu-'$e'-'$d'.mlir --export-plan $O/plan-'$e'-'$d'.json > /dev/null && $B/doppler-opt $O/cpu-'$e'-'$d'.mlir --doppler-lower-to-runtime="inputs=first-user" -o $O/lowered-first-'$e'-'$d'.mlir'
  done
done
for g in $graphs/*.txt; do
  n=$(basename $g .txt)
  for p in critical-path join-aware heft round-robin random single doppler; do
    for d in 2 4 8; do
      run place-$n-$p-$d '$B/doppler-place '$g' --devices '$d' --policy '$p' --json'
    done
  done
  run place-$n-samples '$B/doppler-place '$g' --devices 4 --policy doppler --samples 8 --json'
  run import-$n '$B/doppler-translate --import-doppler-graph '$g' | $B/doppler-opt --doppler-place=devices=4 --doppler-insert-transfers --doppler-simulate'
done
run place-llama-mlir '$B/doppler-place '$ex/llama_block.mlir' --devices 4 --json'
exit $differ

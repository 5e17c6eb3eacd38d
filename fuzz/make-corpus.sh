#!/usr/bin/env bash
# Regenerates the seed corpora fuzz/corpus/<target>/ from the tests, the
# reference graphs, the docs and the tools of a normal build (build/).
# Files named regress-* (inputs that once crashed) and hand-* (written by
# hand to cover what the tests do not) are kept as they are.
#   fuzz/make-corpus.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${DOPPLER_BUILD_DIR:-$root/build}}
bin=$build/bin
corpus=$root/fuzz/corpus
data=$root/../shared/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in mlir graph system plan model; do
  mkdir -p "$corpus/$t"
  find "$corpus/$t" -type f ! -name 'regress-*' ! -name 'hand-*' -delete
done

# mlir: every lit .mlir test, split at "// -----" as --split-input-file
# does, without RUN/CHECK/expected-* lines; pieces of at most 4 KiB, the
# first 6 of each file.
python3 - "$root" "$corpus/mlir" <<'PY'
import hashlib, os, re, sys
root, out = sys.argv[1], sys.argv[2]
seen = set()
skip = re.compile(r"^\s*//\s*(RUN|CHECK|[A-Z0-9_-]+:|expected-)")
for dirpath, _, files in sorted(os.walk(os.path.join(root, "test"))):
    for name in sorted(files):
        if not name.endswith(".mlir"):
            continue
        text = open(os.path.join(dirpath, name)).read()
        kept = 0
        for i, piece in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            if kept == 6:
                break
            lines = [l for l in piece.splitlines() if not skip.match(l)]
            body = "\n".join(lines).strip() + "\n"
            if len(body) < 20 or len(body) > 4096:
                continue
            digest = hashlib.sha1(body.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            kept += 1
            stem = name[:-5]
            with open(os.path.join(out, f"{stem}-{i}.mlir"), "w") as f:
                f.write(body)
PY
cp "$root/examples/matmul_chain.mlir" "$corpus/mlir/example-matmul_chain.mlir"

# graph: the reference graphs (all small) and the test graphs.
cp "$data"/graphs/*.txt "$corpus/graph/"
for f in "$root"/test/Tools/Inputs/*.txt "$root"/test/Target/Inputs/*.txt; do
  cp "$f" "$corpus/graph/test-$(basename "$f")"
done

# system: every preset as toJson writes it, the docs' example and the
# test systems.
cat >"$tmp/presets.cpp" <<'CPP'
#include "Doppler/Placement/SystemDescription.h"
#include <fstream>
int main(int, char **argv) {
  using doppler::placement::SystemDescription;
  for (const std::string &name : SystemDescription::presetNames())
    std::ofstream(std::string(argv[1]) + "/preset-" + name + ".json")
        << SystemDescription::preset(name)->toJson();
}
CPP
c++ -std=c++17 -I"$root/include" "$tmp/presets.cpp" \
  "$build/lib/libDopplerPlacement.a" "$build/lib/libDopplerSupport.a" \
  -lpthread -o "$tmp/presets"
"$tmp/presets" "$corpus/system"
sed -n '/^```json$/,/^```$/p' "$root/docs/SystemDescription.md" | sed '/^```/d' \
  >"$corpus/system/docs-example.json"
for f in "$root"/test/Transforms/Inputs/*.json; do
  cp "$f" "$corpus/system/test-$(basename "$f")"
done

# plan: the checked-in plan and plans exported from small placed programs.
cp "$root/test/Runtime/Inputs/chain.plan.json" "$corpus/plan/chain.plan.json"
export_plan() {  # export_plan NAME MLIR PIPELINE_OPTIONS
  "$bin/doppler-opt" "$2" --doppler-pipeline="$3" -o "$tmp/$1.placed.mlir" 2>/dev/null &&
    "$bin/doppler-run" "$tmp/$1.placed.mlir" --export-plan "$corpus/plan/$1.plan.json" >/dev/null
}
python3 "$root/examples/generate_examples.py" mlp --batch 4 --d-in 8 --hidden 16 --d-out 8 >"$tmp/mlp.mlir"
export_plan mlp-2 "$tmp/mlp.mlir" "devices=2 parts=2 policy=critical-path"
python3 "$root/examples/generate_examples.py" chain --size 8 >"$tmp/chain.mlir"
export_plan chain-3 "$tmp/chain.mlir" "devices=3 parts=2 policy=heft"
python3 "$root/examples/generate_examples.py" llama --seq 4 --d-model 8 --heads 2 --ffn 8 >"$tmp/llama.mlir"
export_plan llama-2 "$tmp/llama.mlir" "devices=2 parts=1 policy=critical-path"

# model: tiny models of both architectures (12-14 KB each).
for arch in "slim,hidden=4,head=4,rounds=1,rank=1" "reference,hidden=4,head=4,rounds=1" \
            "slim,hidden=4,head=4,rounds=1,rank=1,join=1,project=0"; do
  name=$(echo "$arch" | tr ',=' '-_')
  "$bin/doppler-train" "$root/test/Tools/Inputs/diamond.txt" --devices 2 --stages il \
    --episodes 3 --architecture "$arch" -o "$tmp/$name.pt" --no-progress \
    --evaluate-every 0 >/dev/null
  cp "$tmp/$name.pt" "$corpus/model/$name.pt"
done

du -sh "$corpus"
for t in mlir graph system plan model; do
  echo "$t: $(find "$corpus/$t" -type f | wc -l) seeds"
done

#!/usr/bin/env python3
"""PyTorch module -> torch dialect -> linalg on tensors -> doppler.

Exports each example of examples/torch/ (or the given files: each defines
`make()` returning (module, example inputs)) with torch.export, imports it to
MLIR's torch dialect with IREE's FxImporter (iree-base-compiler), lowers it
to linalg on tensors with iree-opt's
torchdynamo-export-to-torch-backend-pipeline and
torch-backend-to-linalg-on-tensors-backend-pipeline, and converts that with
`doppler-opt --convert-linalg-to-doppler`. Prints, per example, the linalg
and tensor ops before and what convert-linalg-to-doppler converted and left
(by kind). Files land in --out (NAME.torch.mlir, NAME.linalg.mlir,
NAME.doppler.mlir).

Needs a Python with torch 2.x and iree-base-compiler (see
docs/LinalgFrontends.md: not part of CI, the wheels are large):

  python3 -m venv build/l2d-venv
  build/l2d-venv/bin/pip install torch iree-base-compiler
  build/l2d-venv/bin/python scripts/torch_to_linalg.py --out build/torch-linalg
"""

import argparse
import collections
import importlib.util
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    sys.path.insert(0, os.path.dirname(path))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_torch_dialect(make):
    import torch
    from iree.compiler.extras.fx_importer import FxImporter

    module, inputs = make()
    # Parameters and buffers become arguments (after the inputs): weights
    # inlined as literals do not lower (dense_resource), and Doppler places
    # arguments like any value.
    names = [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]
    state = dict(module.named_parameters())
    state.update(dict(module.named_buffers()))

    class Functional(torch.nn.Module):
        def forward(self, *args):
            count = len(inputs)
            weights = dict(zip(names, args[count:]))
            return torch.func.functional_call(module, weights, tuple(args[:count]))

    arguments = tuple(inputs) + tuple(state[n].detach() for n in names)
    with torch.no_grad():
        program = torch.export.export(Functional(), arguments)
    importer = FxImporter()
    importer.import_frozen_program(program)
    return str(importer.module)


def op_counts(text, dialects=("linalg", "tensor")):
    """Ops of the given dialects at function level (not those in bodies)."""
    counts = collections.Counter()
    for match in re.finditer(r"=\s+(?:\"?)((?:%s)\.[a-z_]+)" % "|".join(dialects), text):
        name = match.group(1)
        if name not in ("linalg.yield", "linalg.index", "tensor.yield", "tensor.empty",
                        "tensor.dim"):
            counts[name] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("examples", nargs="*",
                        default=[os.path.join(ROOT, "examples", "torch", n)
                                 for n in ("mlp.py", "llama_block.py", "gpt_block.py")])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "torch-linalg"))
    parser.add_argument("--iree-opt", default=os.path.join(os.path.dirname(sys.executable),
                                                           "iree-opt"))
    parser.add_argument("--doppler-opt", default=os.path.join(ROOT, "build", "bin", "doppler-opt"))
    parser.add_argument("--options", default="report=true",
                        help="options of convert-linalg-to-doppler")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for path in args.examples:
        name = os.path.basename(path)[:-3]
        torch_mlir = os.path.join(args.out, name + ".torch.mlir")
        linalg_mlir = os.path.join(args.out, name + ".linalg.mlir")
        doppler_mlir = os.path.join(args.out, name + ".doppler.mlir")
        with open(torch_mlir, "w") as f:
            f.write(to_torch_dialect(load(path).make))
        subprocess.run([args.iree_opt, torch_mlir, "-o", linalg_mlir, "--pass-pipeline="
                        "builtin.module(torchdynamo-export-to-torch-backend-pipeline,"
                        "torch-backend-to-linalg-on-tensors-backend-pipeline)"],
                       check=True)
        done = subprocess.run([args.doppler_opt, linalg_mlir, "-o", doppler_mlir,
                               "--convert-linalg-to-doppler=" + args.options],
                              capture_output=True, text=True)
        before = op_counts(open(linalg_mlir).read())
        print(f"== {name}: {sum(before.values())} linalg/tensor ops "
              f"({', '.join(f'{k}: {v}' for k, v in sorted(before.items()))})")
        # The function's remark as is; the per-op reasons (report=true)
        # counted by reason.
        reasons = collections.Counter()
        for line in done.stderr.splitlines():
            if "remark: left as is: " in line:
                reasons[line.split("remark: left as is: ", 1)[1]] += 1
            elif "remark:" in line or "error:" in line:
                print("  " + line.split(": ", 1)[1] if ": " in line else line)
        for reason, count in sorted(reasons.items()):
            print(f"    {count} left: {reason}")
        if done.returncode != 0:
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

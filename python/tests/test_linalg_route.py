"""examples/torch through linalg: each model exported to doppler by the
frontend, lowered to linalg on tensors (convert-doppler-to-linalg, then
linalg-generalize-named-ops), brought back with convert-linalg-to-doppler
full=true (no linalg or tensor op may be left), placed on 4 CPU devices
(doppler-pipeline, system cpu4) and run by doppler-run on the frontend's
arguments: the outputs equal torch's within 1e-4. This checks
convert-linalg-to-doppler on the ops real models produce."""

import os
import re
import subprocess
import sys
import tempfile

import pytest
import torch

from conftest import needs_tools

import doppler
from doppler.api import read_outputs
from doppler.api import write_arguments
from doppler.tools import run_tool

pytestmark = needs_tools

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "torch")
sys.path.insert(0, EXAMPLES)

# Debian's stock mlir-opt has linalg-generalize-named-ops; doppler-opt does
# not register it. convert-doppler-to-linalg writes linalg.generic only, so
# the step is a check that generic ops are what arrives, and is skipped
# without the tool.
STOCK_MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"

# Op names at the start of an op (after `%x = ` or not), e.g. linalg.generic.
_OP = re.compile(r'^\s*(?:%[\w.$#:-]+(?:,\s*%[\w.$#:-]+)*\s*=\s*)?"?([a-z_]+\.[\w.]+)"?',
                 re.MULTILINE)


def ops(text):
    return _OP.findall(text)


def relative(out, ref):
    if isinstance(ref, torch.Tensor):
        return ((out.double() - ref.double()).norm() / ref.double().norm()).item()
    return max(relative(o, r) for o, r in zip(out, ref))


@pytest.mark.parametrize("name", ["mlp", "llama_block", "gpt_block", "resnet_small"])
def test_example_through_linalg_matches_torch(name):
    example = __import__(name)
    module, inputs = example.make()
    with torch.no_grad():
        expected = module(*inputs)
    program = doppler.exported(module, inputs)
    with tempfile.TemporaryDirectory(prefix="doppler-l2d-") as tmp:
        paths = {k: os.path.join(tmp, k + ".mlir")
                 for k in ("doppler", "linalg", "generic", "back", "placed")}
        with open(paths["doppler"], "w") as f:
            f.write(program.mlir)
        run_tool("doppler-opt", [paths["doppler"], "--convert-doppler-to-linalg",
                                 "-o", paths["linalg"]])
        linalg = open(paths["linalg"]).read()
        assert not [op for op in ops(linalg) if op.startswith("doppler.")], \
            "convert-doppler-to-linalg left doppler ops"
        assert "linalg.generic" in linalg
        source = paths["linalg"]
        if os.access(STOCK_MLIR_OPT, os.X_OK):
            subprocess.run([STOCK_MLIR_OPT, paths["linalg"], "--linalg-generalize-named-ops",
                            "-o", paths["generic"]], check=True)
            source = paths["generic"]
        run_tool("doppler-opt", [source, "--convert-linalg-to-doppler=full=true",
                                 "-o", paths["back"]])
        back = open(paths["back"]).read()
        left = [op for op in ops(back) if op.split(".")[0] in ("linalg", "tensor")]
        assert not left, f"left after convert-linalg-to-doppler: {sorted(set(left))}"
        run_tool("doppler-opt", [paths["back"],
                                 "--doppler-pipeline=system=cpu4 devices=4 policy=doppler",
                                 "-o", paths["placed"]])
        arguments = os.path.join(tmp, "arguments.json")
        outputs = os.path.join(tmp, "outputs.json")
        write_arguments(program, arguments)
        run_tool("doppler-run", [paths["placed"], "--backend", "cpu", "--devices", "4",
                                 "--arguments", arguments, "--write-outputs", outputs,
                                 "--repeat", "1"])
        results = program.unflatten(read_outputs(outputs))
    error = relative(results, expected)
    print(f"{name} through linalg: relative error vs torch {error:.3g}")
    assert error <= 1e-4

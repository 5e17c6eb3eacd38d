"""doppler.api's tensor files: what doppler.run hands to doppler-run
(--arguments) and reads back (--write-outputs). The binary form
(runtime/lib/TensorFile.h) round-trips every element type bit for bit in
Python and through doppler-run; JSON stays readable."""

import os
import subprocess

import torch

from conftest import needs_tools
from doppler import api, find_tool


def _tensors():
    return [torch.tensor([[1.5, -0.0, float("inf")], [float("-inf"), float("nan"), 1e-42]]),
            torch.tensor(3.141592653589793, dtype=torch.float64),
            torch.zeros(0, 4, dtype=torch.float16),
            torch.arange(5, dtype=torch.int64) - 2]


def test_binary_round_trip_in_python(tmp_path):
    path = str(tmp_path / "t.bin")
    api._write_binary(_tensors(), path)
    with open(path, "rb") as f:
        assert f.read(8) == b"DPLRTNS1"
    back = api.read_outputs(path)
    for a, b in zip(_tensors(), back):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.numpy().tobytes() == b.numpy().tobytes()


@needs_tools
def test_doppler_run_reads_and_writes_binary_files(tmp_path):
    # y = x * w (elementwise) on 2x3 f32: the arguments go in as a binary
    # file, the output comes back as one, and equals the product.
    program = tmp_path / "p.mlir"
    program.write_text(
        'func.func @f(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {\n'
        '  %y = doppler.einsum "ij,ij->ij" join(mul) (%x, %w) {doppler.device = '
        '#doppler.device<0>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n'
        '  return %y : tensor<2x3xf32>\n}\n')
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5
    w = torch.full((2, 3), 0.5)
    arguments, outputs = str(tmp_path / "args.bin"), str(tmp_path / "out.bin")
    api._write_binary([x, w], arguments)
    done = subprocess.run([find_tool("doppler-run"), str(program), "--devices", "1",
                           "--arguments", arguments, "--write-outputs", outputs],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (y,) = api.read_outputs(outputs)
    assert torch.equal(y, x * w)
    # A truncated file is an error naming it, not a crash.
    with open(arguments, "rb") as f:
        data = f.read()
    with open(arguments, "wb") as f:
        f.write(data[:-3])
    done = subprocess.run([find_tool("doppler-run"), str(program), "--devices", "1",
                           "--arguments", arguments], capture_output=True, text=True)
    assert done.returncode == 1
    assert f"{arguments}: tensors[1]: its 24 bytes run past the end of the file" in done.stderr
    assert os.path.exists(outputs)

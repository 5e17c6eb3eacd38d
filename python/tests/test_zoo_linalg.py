"""scripts/zoo_linalg.py: zoo models through PyPI torch-mlir to linalg on
tensors, then convert-linalg-to-doppler full=true. The end-to-end test runs
it with --run on ResNet-18 and GPT-2 (nothing left in either; whatever would
be is listed with its reason and counted in the row; each converted program
placed on 4 cpu4 devices and run by doppler-run within 1e-4 of PyTorch) with
build/torch-mlir-venv's python, and is
skipped when that venv is not there (scripts/setup_torch_mlir.sh installs it;
the suite installs nothing). The helpers that read the IR and write the docs
section are tested without it."""

import os
import re
import subprocess
import sys

import pytest

from conftest import needs_tools

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "zoo_linalg.py")
BUILD = os.environ.get("DOPPLER_BUILD_DIR", os.path.join(ROOT, "build"))
VENV_PYTHON = os.path.join(BUILD, "torch-mlir-venv", "bin", "python")

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import zoo_linalg  # noqa: E402

# A row: | model | in | converted | out | left | import s | convert s | rel. error | run s |
_ROW = re.compile(r"^\| (\w+) \| (\d+) \(([^)]*)\) \| (\d+) \| (\d+) \(([^)]*)\) \| "
                  r"(\d+)(?: \(([^)]*)\))? \| [\d.]+ \| [\d.]+ \| ([^|]+) \| ([\d.]+|-) \|$",
                  re.MULTILINE)


@needs_tools
@pytest.mark.skipif(not os.access(VENV_PYTHON, os.X_OK),
                    reason="no torch-mlir venv (scripts/setup_torch_mlir.sh installs it)")
def test_resnet18_and_gpt2_through_torch_mlir(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    table = tmp_path / "zoo.md"
    table.write_text("# Model zoo\n\n## Handed over as nn.Modules\n\nkept\n")
    done = subprocess.run([VENV_PYTHON, SCRIPT, "resnet18", "gpt2", "--run", "--out",
                           str(tmp_path / "out"), "--table", str(table)],
                          capture_output=True, text=True, timeout=600, env=env)
    rows = {m.group(1): m for m in _ROW.finditer(done.stdout)}
    assert set(rows) == {"resnet18", "gpt2"}, done.stdout + done.stderr
    for row in rows.values():
        assert int(row.group(2)) > 0 and int(row.group(4)) > 0 and int(row.group(5)) > 0, \
            row.group(0)
    # ResNet-18 converts completely (convolutions, pools, pads, batch norm).
    assert rows["resnet18"].group(7) == "0", rows["resnet18"].group(0)
    assert "conv 20" in rows["resnet18"].group(6) and "pool 1" in rows["resnet18"].group(6)
    assert "- **resnet18**: nothing left." in done.stdout
    # Both convert with nothing left and run equal to torch.
    for row in rows.values():
        assert row.group(7) == "0" and float(row.group(9)) <= 1e-4, row.group(0)
    # GPT-2: its embeddings are gathers; what is left would be listed per
    # kind, the counts adding up to the row's.
    assert "gather 2" in rows["gpt2"].group(6), rows["gpt2"].group(0)
    left = int(rows["gpt2"].group(7))
    if left:
        listed = re.search(r"- \*\*gpt2\*\* \((\d+) left\):\n((?:  - .*\n)+)", done.stdout)
        assert listed and int(listed.group(1)) == left, done.stdout
        counts = [int(n) for n in re.findall(r"^  - (\d+) x ", listed.group(2), re.MULTILINE)]
        assert sum(counts) == left, listed.group(2)
    assert done.returncode == (1 if left else 0), done.stderr
    # The section is written into the file after what was there.
    text = table.read_text()
    assert text.startswith("# Model zoo\n\n## Handed over as nn.Modules\n\nkept\n")
    assert text.count(zoo_linalg.SECTION) == 1 and rows["gpt2"].group(0) in text
    assert os.path.exists(tmp_path / "out" / "resnet18.doppler.mlir")


_GENERIC = """module {
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xi1>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %1 = "tensor.empty"() : () -> tensor<4xi1>
    %2 = "linalg.generic"(%arg0, %1) <{indexing_maps = [#map, #map]}> ({
    ^bb0(%in: f32, %out: i1):
      %3 = "arith.cmpf"(%in, %0) <{predicate = 1 : i64}> : (f32, f32) -> i1
      "linalg.yield"(%3) : (i1) -> ()
    }) : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xi1>
    "func.return"(%2) : (tensor<4xi1>) -> ()
  }) : () -> ()
}
"""


def test_reads_generic_ops_and_says_what_is_left():
    ops = zoo_linalg.top_level_ops(_GENERIC)
    assert [o["name"] for o in ops] == ["arith.constant", "tensor.empty", "linalg.generic",
                                        "func.return"]
    generic = ops[2]
    assert generic["line"] == 6 and generic["body"] == ["arith.cmpf", "linalg.yield"]
    assert zoo_linalg.what_it_is(generic) == \
        "linalg.generic: float comparison into an i1 mask, f32/i1 -> i1"
    assert zoo_linalg.source_of('loc(callsite("/x/site-packages/torch/nn/f.py":3:0 at '
                                'callsite("/x/site-packages/transformers/m.py":9:0 at '
                                '"/x/run.py":1:0)))') == "torch/nn/f.py:3 (from transformers/m.py:9)"


def test_section_replaces_its_earlier_self(tmp_path):
    path = tmp_path / "zoo.md"
    path.write_text(f"# Z\n\n{zoo_linalg.SECTION}\n\nold\n\n## After\n\nkept\n")
    zoo_linalg.write_section(str(path), f"{zoo_linalg.SECTION}\n\nnew\n")
    assert path.read_text() == f"# Z\n\n{zoo_linalg.SECTION}\n\nnew\n\n## After\n\nkept\n"
    zoo_linalg.write_section(str(path), f"{zoo_linalg.SECTION}\n\nnewer\n")
    assert path.read_text() == f"# Z\n\n{zoo_linalg.SECTION}\n\nnewer\n\n## After\n\nkept\n"


_OTHER_MASKS = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import zoo_linalg
for name in ("bert", "roberta"):
    (e1, o1), (e2, o2) = zoo_linalg.other_masks(name, sys.argv[3], sys.argv[4])
    differ = max(float((a - b).abs().max()) for a, b in zip(o1, o2))
    scale = max(float(a.abs().max()) for a in o1)
    print(name, e1, e2, differ / scale)
"""


@needs_tools
@pytest.mark.skipif(not os.access(VENV_PYTHON, os.X_OK),
                    reason="no torch-mlir venv (scripts/setup_torch_mlir.sh installs it)")
def test_one_converted_program_two_masks(tmp_path):
    """The padding mask is data: BERT and RoBERTa converted once (nothing
    left), run with the zoo's mask and with another one (RoBERTa's pad
    tokens moved with it, so its positions, a cumsum of the ids, change),
    each within 1e-6 of eager, and the outputs differ between the two by
    far more than that (relative to the largest output)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([VENV_PYTHON, "-c", _OTHER_MASKS, os.path.join(ROOT, "scripts"),
                           os.path.join(ROOT, "python"), str(tmp_path),
                           os.path.join(BUILD, "bin", "doppler-opt")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    assert [r[0] for r in rows] == ["bert", "roberta"], done.stdout
    for name, first, second, differ in rows:
        assert float(first) <= 1e-6 and float(second) <= 1e-6, rows
        assert float(differ) > 1e-4, rows

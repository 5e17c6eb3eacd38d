"""bench/torch_compare.py (Doppler against PyTorch eager) runs end to end:
a --quick run on the MLP prints its table and finds Doppler's outputs equal
to PyTorch's. The timings themselves depend on the machine and are not
checked."""

import os
import subprocess
import sys

from conftest import needs_tools

pytestmark = needs_tools

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                      "torch_compare.py")


def test_quick_mlp_prints_table():
    done = subprocess.run([sys.executable, SCRIPT, "--quick", "--functions", "mlp", "--runs", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    header = [i for i, line in enumerate(lines) if line.startswith("function")]
    assert header, done.stdout
    rows = [line.split() for line in lines[header[0] + 2:] if line.strip()]
    # One row per thread / device count (1 and 2), every column filled.
    assert [row[:2] for row in rows] == [["mlp", "1"], ["mlp", "2"]], done.stdout
    for row in rows:
        assert len(row) == 7 and "-" not in row, done.stdout
        assert all(float(value) > 0 for value in row[2:]), done.stdout
    assert "relative error" in done.stdout

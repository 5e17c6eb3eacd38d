"""bench/task_overhead.py (the runtime's cost per task against PyTorch
eager's per op) runs end to end: a --quick run prints one row per program
and runner with positive times. The timings themselves depend on the
machine and are not checked."""

import os
import subprocess
import sys

from conftest import needs_tools

pytestmark = needs_tools

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                      "task_overhead.py")


def test_quick_run_prints_table():
    done = subprocess.run([sys.executable, SCRIPT, "--quick"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.strip("|").split("|") for line in done.stdout.splitlines()[2:]]
    runners = sorted((row[0].strip(), row[1].strip()) for row in rows)
    assert runners == [("chain", "doppler D=1"), ("chain", "torch eager"),
                       ("fan", "doppler D=1"), ("fan", "doppler D=2"),
                       ("fan", "torch eager")], done.stdout
    assert all(float(row[2]) > 0 and float(row[3]) > 0 for row in rows), done.stdout

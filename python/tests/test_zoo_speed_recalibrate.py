"""bench/zoo_speed.py --recalibrate: each round calibrates the host anew and
re-costs the placed programs with it, and the rows carry the median over
rounds of measured over that round's prediction ("recalibrated"), beside
the prediction of the calibration made at the start. Timings are not
checked, only that the column is there and positive, and that the
re-costing leaves the user's cache of host descriptions alone."""

import json
import os
import subprocess
import sys

import pytest

from doppler import zoo
# The same script, skips and marks as the --quick test's.
from test_zoo_speed import SCRIPT, pytestmark  # noqa: F401


def test_recalibrated_ratio_per_row(tmp_path):
    models = [name for name in ("gpt2", "convnext") if zoo.available(name)][:1]
    if not models:
        pytest.skip("no zoo model's library is installed")
    out = tmp_path / "rows.json"
    cache = tmp_path / "cache"
    env = dict(os.environ, DOPPLER_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, SCRIPT, "--quick", "--recalibrate", *models,
                           "--json", str(out)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(out.read_text())
    assert [row["name"] for row in rows] == models
    assert all(row["recalibrated"] > 0 and row["predicted"] > 0 for row in rows), rows
    assert "recal" in done.stdout
    # The start's description for D = 1 only: the rounds' own live elsewhere.
    assert len(os.listdir(cache)) == 1, os.listdir(cache)

"""bench/zoo_speed.py (real models on Doppler's CPU runtime against
PyTorch eager and torch.compile) runs end to end: a --quick run on a zoo
model writes its row with positive eager and Doppler times, a
prediction, and outputs that matched PyTorch (the script fails otherwise).
The timings themselves depend on the machine and are not checked. Needs
torch.export (torch 2.x) and the models' libraries."""

import json
import os
import subprocess
import sys

import pytest

from conftest import needs_tools
from doppler import zoo
from doppler.sources import has_export

pytestmark = [needs_tools,
              pytest.mark.skipif(not has_export(), reason="needs torch.export (torch 2.x)")]

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                      "zoo_speed.py")


def test_quick_run_writes_rows(tmp_path):
    # One model keeps the suite short: the first whose library is here.
    models = [name for name in ("convnext", "gpt2") if zoo.available(name)][:1]
    if not models:
        pytest.skip("neither torchvision nor transformers is installed")
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, SCRIPT, "--quick", *models, "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(out.read_text())
    assert [row["name"] for row in rows] == models, done.stdout
    for row in rows:
        assert row["devices"] == 1 and row["ops"] > 0, row
        assert row["eager"] > 0 and row["doppler"] > 0 and row["predicted"] > 0, row
    assert "meas/pred" in done.stdout


def test_unknown_model_is_an_error():
    done = subprocess.run([sys.executable, SCRIPT, "--quick", "no_such_model"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown or unavailable models ['no_such_model']" in done.stderr

"""Values put into the pipeline string (one quoting function: spaces,
quotes, a value that would set other options), and forward inputs that are
tuples, lists or dicts of tensors."""

import os
import shutil

import pytest
import torch
import torch.nn as nn

import doppler
from conftest import assert_close, needs_tools
from doppler.api import _pipeline_spec, pipeline_value

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SYSTEM_JSON = os.path.join(REPO, "test", "Transforms", "Inputs", "join-throughput-system.json")


def test_plain_values_stay_plain():
    assert pipeline_value("system", "h100x4") == "h100x4"
    assert pipeline_value("samples", 0) == "0"
    assert pipeline_value("verbose", True) == "true"
    assert pipeline_value("budget-ms", 2.5) == "2.5"


def test_values_with_spaces_or_quotes_are_quoted():
    assert pipeline_value("system", "/a dir/s.json") == '"/a dir/s.json"'
    assert pipeline_value("seed", "1 devices=8") == '"1 devices=8"'
    assert pipeline_value("model", 'say "x"') == "'say \"x\"'"
    assert pipeline_value("model", "") == '""'
    assert pipeline_value("model", "{a}") == '"{a}"'


def test_values_that_cannot_be_written_are_errors():
    with pytest.raises(doppler.DopplerError, match="both"):
        pipeline_value("model", "it's \"x\"")
    with pytest.raises(doppler.DopplerError, match="control"):
        pipeline_value("model", "a\nb")
    with pytest.raises(doppler.DopplerError, match="expected a string"):
        pipeline_value("model", [1, 2])


def test_option_names_and_devices_are_checked():
    with pytest.raises(doppler.DopplerError, match="not an option name"):
        _pipeline_spec(2, "cpu4", "doppler", {"seed=1 devices": 8})
    with pytest.raises(doppler.DopplerError, match="positive integer"):
        _pipeline_spec("2 devices=8", "cpu4", "doppler", {})
    assert _pipeline_spec(2, "cpu4", "doppler", {"budget_ms": 1}) == \
        "system=cpu4 devices=2 policy=doppler budget-ms=1"


@needs_tools
def test_system_file_in_a_folder_with_a_space(tmp_path):
    folder = tmp_path / "a folder with spaces"
    folder.mkdir()
    system = str(folder / "system.json")
    shutil.copy(SYSTEM_JSON, system)
    placement = doppler.place(nn.Linear(8, 4), (torch.randn(2, 8),), devices=2, system=system,
                              policy="round-robin")
    assert placement.makespan > 0
    assert set(d for d in placement.devices.values() if d is not None) <= {0, 1}


@needs_tools
def test_a_value_cannot_set_other_options():
    """seed="1 devices=8" is one (invalid) seed value, never 8 devices."""
    with pytest.raises(doppler.ToolError, match="seed"):
        doppler.place(nn.Linear(8, 4), (torch.randn(2, 8),), devices=2, system="cpu4",
                      seed="1 devices=8")


class PairAndDict(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, pair, named):
        return self.fc(pair[0]) * pair[1] + named["bias"]


def _structured_inputs():
    torch.manual_seed(0)
    return ((torch.randn(2, 4), torch.randn(2, 4)), {"bias": torch.randn(4)})


def test_tuple_and_dict_inputs_are_flattened():
    inputs = _structured_inputs()
    program = doppler.exported(PairAndDict(), inputs)
    args = [a for a in program.arguments if a.kind == "input"]
    assert [tuple(a.tensor.shape) for a in args] == [(2, 4), (2, 4), (4,)]
    assert torch.equal(args[2].tensor, inputs[1]["bias"])


@needs_tools
def test_tuple_and_dict_inputs_run():
    module = PairAndDict().eval()
    inputs = _structured_inputs()
    result = doppler.run(module, inputs, devices=2, system="cpu4", policy="round-robin",
                         repeat=1)
    with torch.no_grad():
        assert_close(result.outputs, module(*inputs), 1e-5)

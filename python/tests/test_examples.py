"""examples/torch: each model through doppler-pipeline on 4 CPU devices
(the learned policy) and doppler-run equals torch within 1e-4."""

import os
import sys

import pytest

from conftest import needs_tools

pytestmark = needs_tools

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "torch")
sys.path.insert(0, EXAMPLES)


@pytest.mark.parametrize("name", ["mlp", "llama_block", "gpt_block", "resnet_small"])
def test_example_matches_torch(name):
    common = __import__("common")
    example = __import__(name)
    error, result = common.check(example.make, devices=4, system="cpu4")
    print(f"{name}: relative error {error:.3g}")
    assert error <= 1e-4
    assert result.max_rel_error <= 1e-4  # the runtime against the reference interpreter
    used = {d for d in result.placement.devices.values() if d is not None}
    assert len(used) > 1  # really spread over devices

"""Three of the models the zoo does not list (doppler.zoo_unseen; the whole
list is scripts/zoo_unseen.py, too long for the suite), chosen for the
Core ATen ops they need that no zoo model does: SegFormer (bilinear
upsampling), Hugging Face's Swin (strided slices, rolls, reflection-free
window padding) and GPT-J (its rotary embedding's strided slices). Each
runs through doppler.run on 4 CPU devices within 1e-4 of PyTorch eager."""

import pytest

from conftest import needs_tools
from doppler import zoo, zoo_unseen

SUITE = ["segformer", "swin", "gptj"]


@needs_tools
@pytest.mark.parametrize("name", SUITE)
def test_unseen_model_runs_like_torch(name):
    pytest.importorskip(zoo_unseen.MODELS[name][0])
    row, expected, result = zoo.check(name, devices=4, system="cpu4")
    assert row.error is None, row.error
    assert row.rel_error <= 1e-4, f"{name}: relative error {row.rel_error:.3g}"

"""doppler.zoo reports a model its library does not have (an older
version) as skipped, not as an error of Doppler's, and still raises any
other AttributeError of a builder."""

import types

import pytest

from doppler import zoo


def test_model_missing_from_the_library_is_skipped(monkeypatch):
    def builder():
        import torch
        raise AttributeError("module 'torch' has no attribute 'NoSuchModel'",
                             name="NoSuchModel", obj=torch)

    monkeypatch.setitem(zoo.MODELS, "no_such_model", ("torch", builder))
    row, expected, result = zoo.check("no_such_model")
    assert row.skipped.startswith("torch ") and row.skipped.endswith("has no NoSuchModel")
    assert expected is None and result is None


def test_other_attribute_errors_are_raised(monkeypatch):
    def builder():
        return types.SimpleNamespace().missing

    monkeypatch.setitem(zoo.MODELS, "broken_builder", ("torch", builder))
    with pytest.raises(AttributeError):
        zoo.check("broken_builder")

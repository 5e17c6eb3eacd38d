"""Shared helpers of the doppler package's tests.

Tests that run Doppler's tools skip when the tools are not found (see
doppler.tools: $DOPPLER_BUILD_DIR/bin, <repo>/build/bin, PATH).
"""

import collections
import os
import re
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Host calibrations (system="host", bench/zoo_speed.py --recalibrate) skip
# the GEMM-shape grids here: a dozen calibrations run in the suite, and each
# grid costs seconds; test/Runtime/calibrate.test checks the grids
# themselves. A test may set it back.
os.environ.setdefault("DOPPLER_CALIBRATE_GRIDS", "0")

import doppler  # noqa: E402
from doppler.errors import ToolNotFoundError  # noqa: E402


def _tools_available():
    try:
        for tool in ("doppler-opt", "doppler-run", "doppler-translate"):
            doppler.find_tool(tool)
        return True
    except ToolNotFoundError:
        return False


needs_tools = pytest.mark.skipif(not _tools_available(),
                                 reason="Doppler's tools are not built (build/bin)")


class _Fn1(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a):
        return self.fn(a)


class _Fn2(_Fn1):
    def forward(self, a, b):
        return self.fn(a, b)


class _Fn3(_Fn1):
    def forward(self, a, b, c):
        return self.fn(a, b, c)


def Fn(fn, arity):
    """A module whose forward is `fn` (traced inline by torch.fx; torch 1.13
    cannot trace a forward(*args))."""
    return (_Fn1, _Fn2, _Fn3)[arity - 1](fn)


OP_PATTERN = re.compile(r'=\s*"?(doppler\.\w+)')


def op_counts(module, inputs):
    """doppler op name (without 'doppler.') -> count in the imported program,
    and the program's text."""
    if not isinstance(module, torch.nn.Module):
        module = Fn(module, len(inputs))
    text = doppler.export(module, inputs)
    return collections.Counter(op.split(".", 1)[1] for op in OP_PATTERN.findall(text)), text


def randn(*shape):
    return torch.randn(*shape)


def assert_close(actual, expected, tol):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual)}"
        assert actual.shape == expected.shape, f"{tuple(actual.shape)} != {tuple(expected.shape)}"
        assert actual.dtype == expected.dtype
        ref = expected.double()
        err = (actual.double() - ref).norm() / max(ref.norm().item(), 1e-30)
        assert err <= tol, f"relative error {err:.3g} > {tol}"
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys()
        for k in expected:
            assert_close(actual[k], expected[k], tol)
        return
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_close(a, e, tol)
        return
    assert actual == expected


def check_run(module, inputs, tol=1e-5, devices=2, policy="round-robin", **options):
    """Runs `module` through doppler.run and compares with torch; returns the RunResult."""
    if not isinstance(module, torch.nn.Module):
        module = Fn(module, len(inputs))
    with torch.no_grad():
        expected = module(*inputs)
    result = doppler.run(module, inputs, devices=devices, system="cpu4", policy=policy,
                         repeat=1, **options)
    assert_close(result.outputs, expected, tol)
    return result

"""Convolutions and pooling import as one doppler.conv / doppler.pool each
(the default; DOPPLER_WINDOW_OPS=0 expands them into slices and einsums).
Op counts are read from the emitted MLIR; values are checked against torch
through the reference interpreter (doppler-run --compare-outputs: no
placement, no runtime) and through doppler.run."""

import collections
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import doppler
from conftest import OP_PATTERN, Fn, check_run, needs_tools, op_counts, randn
from doppler import zoo

pytestmark = needs_tools

torch.manual_seed(0)


r = randn
ops = op_counts


def interpreted(module, inputs, tol=1e-5):
    """The reference interpreter on the imported program's arguments against
    torch (no placement, no runtime); returns the program's op counts."""
    if not isinstance(module, nn.Module):
        module = Fn(module, len(inputs))
    with torch.no_grad():
        expected = module(*inputs)
    program = doppler.exported(module, inputs)
    error = zoo.interpret(program, expected)
    assert error <= tol, f"relative error {error:.3g} > {tol}"
    counts = collections.Counter(op.split(".", 1)[1] for op in OP_PATTERN.findall(program.mlir))
    return counts, program.mlir


# -- convolutions and pooling ---------------------------------------------------------


@pytest.fixture
def window_ops(monkeypatch):
    monkeypatch.setenv("DOPPLER_WINDOW_OPS", "1")


CONVS = {
    "conv1d": (nn.Conv1d(4, 6, 3), (r(2, 4, 9),)),
    "conv1d_padding_dilation": (nn.Conv1d(4, 6, 3, padding=2, dilation=2), (r(2, 4, 9),)),
    "conv1d_same_groups": (nn.Conv1d(4, 8, 4, padding="same", groups=2), (r(2, 4, 9),)),
    "conv2d_stride_padding": (nn.Conv2d(3, 4, 3, stride=2, padding=1), (r(2, 3, 8, 9),)),
    "conv2d_depthwise_no_bias": (nn.Conv2d(4, 4, (3, 2), groups=4, bias=False),
                                 (r(1, 4, 5, 5),)),
    "conv2d_multiplier": (nn.Conv2d(3, 6, 3, groups=3, padding=(0, 1)), (r(2, 3, 6, 6),)),
    "conv2d_unbatched": (nn.Conv2d(3, 2, 2), (r(3, 4, 4),)),
    "conv2d_valid": (lambda x, w: F.conv2d(x, w, padding="valid", dilation=(1, 2)),
                     (r(2, 3, 6, 7), r(2, 3, 3, 2))),
    "conv2d_patches": (nn.Conv2d(3, 8, 4, stride=4), (r(2, 3, 16, 18),)),
    "conv3d": (nn.Conv3d(2, 3, (2, 3, 3), stride=(1, 2, 1), padding=(0, 1, 1)),
               (r(1, 2, 4, 6, 5),)),
}


@pytest.mark.parametrize("name", list(CONVS))
def test_convolution_is_one_conv(window_ops, name):
    module, inputs = CONVS[name]
    counts, text = interpreted(module, inputs)
    assert counts["conv"] == 1, text
    assert counts["slice"] == 0 and counts["assemble"] == 0, text
    bias = isinstance(module, nn.Module) and getattr(module, "bias", None) is not None
    assert counts["einsum"] == (1 if bias else 0), text


def test_conv_text(window_ops):
    """The op's syntax: strides, dilations, low then high padding, groups."""
    counts, text = ops(nn.Conv2d(4, 6, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                 groups=2, bias=False), (r(1, 4, 8, 8),))
    assert re.search(r"doppler\.conv %\S+, %\S+ strides \[2, 1\] dilations \[1, 2\] "
                     r"padding \[1, 2, 1, 2\] groups 2 : \(tensor<1x4x8x8xf32>, "
                     r"tensor<6x2x3x3xf32>\) -> tensor<1x6x4x8xf32>", text), text
    counts, text = ops(nn.MaxPool2d(3, 2, 1, ceil_mode=True), (r(1, 4, 8, 8),))
    assert re.search(r"doppler\.pool max %\S+ kernel \[3, 3\] strides \[2, 2\] dilations "
                     r"\[1, 1\] padding \[1, 1, 2, 2\] : tensor<1x4x8x8xf32> -> "
                     r"tensor<1x4x5x5xf32>", text), text  # ceil_mode: a 5th window


def test_pointwise_convolution_is_one_einsum(window_ops):
    counts, text = interpreted(nn.Conv2d(4, 6, 1), (r(2, 4, 5, 5),))
    assert counts["conv"] == 0 and counts["einsum"] == 2, text  # contraction, bias


POOLS = {
    "max_pool2d": (nn.MaxPool2d(2), (r(2, 3, 8, 8),)),
    "max_pool2d_padding": (nn.MaxPool2d(3, stride=2, padding=1), (r(2, 3, 9, 8),)),
    "max_pool2d_ceil": (nn.MaxPool2d(3, stride=2, ceil_mode=True), (r(2, 3, 8, 9),)),
    "max_pool2d_dilation": (nn.MaxPool2d(2, stride=1, dilation=2), (r(1, 2, 6, 6),)),
    "max_pool1d": (nn.MaxPool1d(3, stride=1), (r(2, 3, 9),)),
    "max_pool3d": (nn.MaxPool3d(2, padding=1), (r(1, 2, 4, 5, 4),)),
    "avg_pool2d_padding": (nn.AvgPool2d(3, stride=2, padding=1), (r(2, 3, 8, 8),)),
    "avg_pool1d": (nn.AvgPool1d(2), (r(2, 3, 9),)),
    "avg_pool3d": (nn.AvgPool3d((1, 2, 2)), (r(1, 2, 3, 4, 4),)),
    "adaptive_avg_pool2d": (nn.AdaptiveAvgPool2d((2, 4)), (r(2, 3, 8, 8),)),
    "adaptive_max_pool2d": (nn.AdaptiveMaxPool2d((4, 2)), (r(2, 3, 8, 8),)),
    "F.adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3), (r(2, 3, 9),)),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pooling_is_one_pool(window_ops, name):
    module, inputs = POOLS[name]
    counts, text = interpreted(module, inputs)
    assert counts["pool"] == 1, text
    assert counts["slice"] == 0 and counts["assemble"] == 0 and counts["einsum"] == 0, text


@pytest.mark.parametrize("name, module, shape", [
    ("count_exclude_pad", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
     (2, 3, 8, 7)),
    ("ceil_past_the_padding", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
     (2, 3, 8, 8)),
    ("ceil_exclude_pad", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False), (1, 2, 8, 8)),
    ("divisor_override", nn.AvgPool2d(2, divisor_override=3), (2, 3, 8, 8)),
])
def test_average_pooling_divisors(window_ops, name, module, shape):
    """Divisors other than the kernel volume: the pool times a correction
    (a host-computed tensor, or a scale for divisor_override)."""
    counts, text = interpreted(module, (r(*shape),))
    assert counts["pool"] == 1 and counts["einsum"] == 1, text


def test_global_pooling_is_one_reduction(window_ops):
    def f(x):
        return F.adaptive_avg_pool2d(x, 1).flatten(1) + F.adaptive_max_pool2d(x, 1).flatten(1)

    counts, text = interpreted(f, (r(2, 3, 5, 6),))
    assert counts["pool"] == 0 and counts["einsum"] == 3, text  # mean, max, add


def test_small_cnn_through_the_interpreter(window_ops):
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                        nn.MaxPool2d(3, 2, 1), nn.Conv2d(8, 8, 3, padding=1, groups=8),
                        nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                        nn.Linear(8, 4))
    counts, text = interpreted(cnn.eval(), (r(2, 3, 16, 16),))
    assert counts["conv"] == 2 and counts["pool"] == 2, text


def test_window_ops_run(window_ops):
    """Through doppler.run: placed, decomposed and run by the runtime."""
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                        nn.MaxPool2d(3, 2, 1, ceil_mode=True),
                        nn.Conv2d(8, 8, 3, padding=1, groups=8),
                        nn.AvgPool2d(2, count_include_pad=False), nn.Flatten())
    result = check_run(cnn.eval(), (r(2, 3, 16, 16),), tol=1e-5)
    assert "doppler.conv" in result.placement.mlir and "doppler.pool" in result.placement.mlir


# -- the expansion (DOPPLER_WINDOW_OPS=0) -------------------------------------------------


@pytest.mark.parametrize("name, module, shape", [
    ("max_ceil", nn.MaxPool2d(3, stride=2, ceil_mode=True), (2, 3, 8, 9)),
    ("avg_ceil_exclude_pad", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                          count_include_pad=False), (1, 2, 8, 8)),
    ("adaptive_max", nn.AdaptiveMaxPool2d((4, 2)), (2, 3, 8, 8)),
    ("patches", nn.Conv2d(3, 8, 4, stride=4), (2, 3, 16, 18)),
    ("long_stride", nn.Conv2d(3, 4, 3, stride=2, padding=1), (1, 3, 17, 16)),
])
def test_expansion(name, module, shape, monkeypatch):
    monkeypatch.setenv("DOPPLER_WINDOW_OPS", "0")
    counts, text = ops(nn.Sequential(module), (r(*shape),))
    assert counts["conv"] == 0 and counts["pool"] == 0, text
    check_run(nn.Sequential(module), (r(*shape),))


def test_patch_embedding_expansion_is_a_reshape_and_an_einsum(monkeypatch):
    """Kernel = stride, no padding (a ViT's patch embedding): no windows."""
    monkeypatch.setenv("DOPPLER_WINDOW_OPS", "0")
    counts, text = ops(nn.Conv2d(3, 8, 4, stride=4, bias=False), (r(2, 3, 16, 16),))
    assert dict(counts) == {"reshape": 1, "einsum": 1}, text


def test_zero_padding_before_a_convolution_is_its_padding(window_ops):
    """F.pad with zeros then a convolution (torch 2 writes padding='same'
    with an even kernel so): the convolution pads; no fill, no assemble."""
    def f(x, w):
        return F.conv2d(F.pad(x, (1, 2, 0, 1)), w, padding=1)

    counts, text = interpreted(f, (r(2, 3, 6, 5), r(4, 3, 3, 3)))
    assert dict(counts) == {"conv": 1}, text
    assert "padding [1, 2, 2, 3]" in text, text

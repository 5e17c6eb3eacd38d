"""Emitters of the piecewise and composite activations (ReLU6 / hardtanh,
hardswish, hardsigmoid, leaky ReLU, ELU, softplus, log1p, expm1), the safe
softmax of torch 2's attention, tensors filled like another (full_like,
zeros_like, ones_like, fill, copy) and torchvision's stochastic depth
(identity in eval)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .ops_elementwise import _binary
from .ops_common import _dim
from .ops_table import register, register_module


def _hardtanh(ctx, input, low, high):
    x = ctx.val(input)
    return _binary(ctx, "min", _binary(ctx, "max", x, float(low)), float(high))


@register(F.hardtanh, "aten.hardtanh")
def hardtanh(ctx, input, min_val=-1.0, max_val=1.0, inplace=False):
    return _hardtanh(ctx, input, min_val, max_val)


@register(F.relu6)
def relu6(ctx, input, inplace=False):
    return _hardtanh(ctx, input, 0.0, 6.0)


@register_module(nn.Hardtanh)  # nn.ReLU6 is a Hardtanh
def hardtanh_module(ctx, module, name, input):
    return _hardtanh(ctx, input, module.min_val, module.max_val)


def _hardsigmoid(ctx, x):
    """relu6(x + 3) / 6."""
    bld = ctx.builder
    return bld.unary(_hardtanh(ctx, bld.unary(x, "shift", 3.0), 0.0, 6.0), "scale", 1.0 / 6.0)


@register(F.hardsigmoid, "aten.hardsigmoid")
def hardsigmoid(ctx, input, inplace=False):
    return _hardsigmoid(ctx, ctx.val(input))


@register(F.hardswish, "aten.hardswish")
def hardswish(ctx, input, inplace=False):
    x = ctx.val(input)
    return ctx.builder.elementwise("mul", [x, _hardsigmoid(ctx, x)], x.shape)


@register_module(nn.Hardsigmoid)
def hardsigmoid_module(ctx, module, name, input):
    return hardsigmoid(ctx, input)


@register_module(nn.Hardswish)
def hardswish_module(ctx, module, name, input):
    return hardswish(ctx, input)


def _leaky_relu(ctx, x, slope):
    """max(x, 0) + slope * min(x, 0)."""
    bld = ctx.builder
    pos = bld.unary(x, "relu")
    neg = bld.unary(bld.unary(bld.unary(x, "neg"), "relu"), "scale", -float(slope))
    return bld.elementwise("add", [pos, neg], x.shape)


@register(F.leaky_relu, "aten.leaky_relu")
def leaky_relu(ctx, input, negative_slope=0.01, inplace=False):
    return _leaky_relu(ctx, ctx.val(input), negative_slope)


@register_module(nn.LeakyReLU)
def leaky_relu_module(ctx, module, name, input):
    return _leaky_relu(ctx, ctx.val(input), module.negative_slope)


def _expm1(ctx, x):
    return ctx.builder.unary(ctx.builder.unary(x, "exp"), "shift", -1.0)


@register(torch.expm1, ".expm1", "aten.expm1")
def expm1(ctx, input):
    return _expm1(ctx, ctx.val(input))


@register(torch.log1p, ".log1p", "aten.log1p")
def log1p(ctx, input):
    return ctx.builder.unary(ctx.builder.unary(ctx.val(input), "shift", 1.0), "log")


@register(F.elu, "aten.elu")
def elu(ctx, input, alpha=1.0, scale=1.0, input_scale=1.0, inplace=False):
    """scale * (max(x, 0) + alpha * (exp(min(x, 0) * input_scale) - 1))."""
    bld = ctx.builder
    x = ctx.val(input)
    neg = bld.unary(bld.unary(bld.unary(x, "neg"), "relu"), "scale", -float(input_scale))
    y = bld.elementwise("add", [bld.unary(x, "relu"),
                                bld.unary(_expm1(ctx, neg), "scale", float(alpha))], x.shape)
    return y if scale == 1.0 else bld.unary(y, "scale", float(scale))


@register(F.softplus, "aten.softplus")
def softplus(ctx, input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, computed as relu(z) + log(1 + exp(-|z|))
    for z = beta x (no overflow; torch's linear branch above `threshold` is
    the same value to float precision)."""
    bld = ctx.builder
    z = bld.unary(ctx.val(input), "scale", float(beta))
    tail = bld.unary(bld.unary(bld.unary(bld.unary(z, "abs"), "neg"), "exp"), "shift", 1.0)
    y = bld.elementwise("add", [bld.unary(z, "relu"), bld.unary(tail, "log")], z.shape)
    return y if beta == 1.0 else bld.unary(y, "scale", 1.0 / float(beta))


@register_module(nn.ELU)
def elu_module(ctx, module, name, input):
    return elu(ctx, input, module.alpha)


@register_module(nn.Softplus)
def softplus_module(ctx, module, name, input):
    return softplus(ctx, input, module.beta, module.threshold)


@register("aten._safe_softmax")
def safe_softmax(ctx, input, dim, dtype=None):
    """Softmax whose rows of only -inf give 0 (torch 2's attention): the
    row max is clamped to the lowest finite value (so such a row's exps
    are 0, not nan) and the sum gets a 1e-30 (so 0 / sum is 0). Other rows
    are unchanged: their sum is at least 1."""
    if dtype is not None and dtype != ctx.dtype:
        raise ctx.unsupported(f"dtype={dtype} (the program is {ctx.dtype})")
    bld = ctx.builder
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    lowest = float(torch.finfo(ctx.dtype).min)
    row_max = bld.reduce(x, [d], True, "max")
    m = bld.elementwise("max", [row_max, bld.scalar(lowest)], row_max.shape)
    e = bld.unary(bld.elementwise("sub", [x, m], x.shape), "exp")
    tiny = 1e-30 if ctx.dtype != torch.float16 else 1e-7
    z = bld.unary(bld.reduce(e, [d], True, "add"), "shift", tiny)
    return bld.elementwise("div", [e, z], x.shape)


def _filled(ctx, value):
    value = float(value)
    if not math.isfinite(value):
        raise ctx.unsupported(f"a fill with {value} shaped like a computed tensor")
    return ctx.builder.fill(value, ctx.shape)


def _like_dtype(ctx, dtype):
    if dtype is not None and dtype != ctx.dtype:
        raise ctx.unsupported(f"a tensor of dtype {dtype} shaped like a computed one")


@register(torch.full_like, "aten.full_like")
def full_like(ctx, input, fill_value, *, dtype=None, **kwargs):
    _like_dtype(ctx, dtype)
    return _filled(ctx, fill_value)


@register(torch.zeros_like, "aten.zeros_like")
def zeros_like(ctx, input, *, dtype=None, **kwargs):
    _like_dtype(ctx, dtype)
    return _filled(ctx, 0.0)


@register(torch.ones_like, "aten.ones_like")
def ones_like(ctx, input, *, dtype=None, **kwargs):
    _like_dtype(ctx, dtype)
    return _filled(ctx, 1.0)


@register("aten.fill")
def fill(ctx, input, value):
    """fill.Scalar / fill.Tensor: the input's shape filled with a value
    (a tensor value: computed by torch, or broadcast from the program's)."""
    if isinstance(value, (int, float)):
        return _filled(ctx, value)
    v = ctx.val(value)
    return _binary(ctx, "add", v, ctx.builder.fill(0.0, ctx.shape))


@register("aten.copy")
def copy(ctx, input, src, non_blocking=False):
    """copy(self, src): src broadcast to self's shape (in the program's dtype)."""
    return _binary(ctx, "add", src, ctx.builder.fill(0.0, ctx.shape))


def _stochastic_depth(ctx, input, p, mode, training=True):
    if training and p > 0:
        raise ctx.unsupported("stochastic depth in training mode (random); call module.eval()")
    return ctx.val(input)


# torchvision's StochasticDepth (EfficientNet, ConvNeXt): identity in eval.
# By name, so that torchvision is not imported here.
register("torchvision.ops.stochastic_depth.stochastic_depth")(_stochastic_depth)


@register_module("torchvision.ops.stochastic_depth.StochasticDepth")
def stochastic_depth_module(ctx, module, name, input):
    return _stochastic_depth(ctx, input, module.p, module.mode, module.training)


__all__ = ["hardtanh", "relu6", "hardswish", "hardsigmoid", "leaky_relu", "elu", "softplus",
           "safe_softmax", "full_like", "zeros_like", "ones_like"]

"""Emitters of elementwise ops: arithmetic with tensors and numbers, unary
joins, activations (functions and modules), GELU's erf form and erf."""

import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .ops_common import _is_number, _is_tensor
from .ops_table import register, register_module


def _power_of_two(c):
    if c == 0 or not math.isfinite(c):
        return False
    m, _ = math.frexp(abs(c))
    return m == 0.5


def _binary(ctx, join, a, b, shape=None):
    """Tensor-tensor or tensor-scalar `join` with torch broadcasting."""
    shape = ctx.shape if shape is None else shape
    bld = ctx.builder
    if _is_tensor(a) and _is_tensor(b):
        return bld.elementwise(join, [ctx.val(a), ctx.val(b)], shape)
    if _is_tensor(a) and _is_number(b):
        x, c = ctx.val(a), float(b)
        if join == "add":
            return _as_shape(ctx, bld.unary(x, "shift", c), shape)
        if join == "sub":
            return _as_shape(ctx, bld.unary(x, "shift", -c), shape)
        if join == "mul":
            return _as_shape(ctx, bld.unary(x, "scale", c), shape)
        if join == "div" and _power_of_two(c):
            return _as_shape(ctx, bld.unary(x, "scale", 1.0 / c), shape)
        if join == "pow":
            return _pow_scalar(ctx, x, c, shape)
        return bld.elementwise(join, [x, bld.scalar(c)], shape)
    if _is_number(a) and _is_tensor(b):
        c, x = float(a), ctx.val(b)
        if join in ("add", "mul", "max", "min"):
            return _binary(ctx, join, b, a, shape)
        if join == "sub":
            return _as_shape(ctx, bld.unary(bld.unary(x, "neg"), "shift", c), shape)
        return bld.elementwise(join, [bld.scalar(c), x], shape)
    raise ctx.unsupported(f"operands {type(a).__name__} and {type(b).__name__}")


def _as_shape(ctx, val, shape):
    if tuple(val.shape) != tuple(shape):
        raise ctx.unsupported(f"scalar operation changes the shape {val.shape} -> {shape}")
    return val


def _pow_scalar(ctx, x, c, shape):
    bld = ctx.builder
    special = {2.0: "square", 0.5: "sqrt", -0.5: "rsqrt", -1.0: "reciprocal"}
    if c == 1.0:
        return x
    if c in special:
        return bld.unary(x, special[c])
    return bld.elementwise("pow", [x, bld.scalar(c)], shape)


def _scaled(ctx, other, alpha):
    if alpha == 1 or alpha is None:
        return other
    if _is_number(other):
        return other * alpha
    return ctx.builder.unary(ctx.val(other), "scale", float(alpha))


@register(torch.add, operator.add, operator.iadd, ".add", ".__add__", ".__radd__",
          "aten.add")
def add(ctx, input, other, *, alpha=1, out=None):
    return _binary(ctx, "add", input, _scaled(ctx, other, alpha))


@register(torch.sub, torch.subtract, operator.sub, operator.isub, ".sub", ".__sub__",
          "aten.sub")
def sub(ctx, input, other, *, alpha=1, out=None):
    return _binary(ctx, "sub", input, _scaled(ctx, other, alpha))


@register(torch.rsub, ".__rsub__", "aten.rsub")
def rsub(ctx, input, other, *, alpha=1):
    return _binary(ctx, "sub", other, _scaled(ctx, input, alpha))


@register(torch.mul, torch.multiply, operator.mul, operator.imul, ".mul", ".__mul__",
          ".__rmul__", "aten.mul")
def mul(ctx, input, other, *, out=None):
    return _binary(ctx, "mul", input, other)


@register(torch.div, torch.divide, torch.true_divide, operator.truediv, operator.itruediv,
          ".div", ".__truediv__", ".true_divide", "aten.div")
def div(ctx, input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        raise ctx.unsupported(f"division with rounding_mode={rounding_mode!r}")
    return _binary(ctx, "div", input, other)


@register(".__rtruediv__")
def rdiv(ctx, input, other):
    return _binary(ctx, "div", other, input)


@register(torch.pow, operator.pow, ".pow", ".__pow__", "aten.pow")
def pow_(ctx, input, exponent, *, out=None):
    return _binary(ctx, "pow", input, exponent)


@register(".__rpow__")
def rpow(ctx, input, other):
    return _binary(ctx, "pow", other, input)


@register(torch.maximum, ".maximum", "aten.maximum")
def maximum(ctx, input, other, *, out=None):
    return _binary(ctx, "max", input, other)


@register(torch.minimum, ".minimum", "aten.minimum")
def minimum(ctx, input, other, *, out=None):
    return _binary(ctx, "min", input, other)


@register(torch.clamp, torch.clip, ".clamp", ".clip", "aten.clamp", "aten.clip")
def clamp(ctx, input, min=None, max=None, *, out=None):
    x = ctx.val(input)
    if min is not None:
        x = _binary(ctx, "max", x, min)
    if max is not None:
        x = _binary(ctx, "min", x, max)
    return x


@register(torch.clamp_min, ".clamp_min", "aten.clamp_min")
def clamp_min(ctx, input, min):
    return clamp(ctx, input, min=min)


@register(torch.clamp_max, ".clamp_max", "aten.clamp_max")
def clamp_max(ctx, input, max):
    return clamp(ctx, input, max=max)


def _unary(join):
    def emit(ctx, input, *args, **kwargs):
        return ctx.builder.unary(ctx.val(input), join)

    return emit


for _join, _targets in {
    "exp": (torch.exp, ".exp", "aten.exp"),
    "log": (torch.log, ".log", "aten.log"),
    "sqrt": (torch.sqrt, ".sqrt", "aten.sqrt"),
    "rsqrt": (torch.rsqrt, ".rsqrt", "aten.rsqrt"),
    "reciprocal": (torch.reciprocal, ".reciprocal", "aten.reciprocal"),
    "abs": (torch.abs, operator.abs, ".abs", "aten.abs"),
    "neg": (torch.neg, torch.negative, operator.neg, ".neg", ".__neg__", "aten.neg"),
    "relu": (torch.relu, F.relu, ".relu", "aten.relu"),
    "tanh": (torch.tanh, F.tanh, ".tanh", "aten.tanh"),
    "sigmoid": (torch.sigmoid, F.sigmoid, ".sigmoid", "aten.sigmoid"),
    "silu": (F.silu, "aten.silu"),
    "square": (torch.square, ".square", "aten.square"),
}.items():
    register(*_targets)(_unary(_join))


@register(F.gelu, "aten.gelu")
def gelu(ctx, input, approximate="none"):
    x = ctx.val(input)
    if approximate == "tanh":
        return ctx.builder.unary(x, "gelu")  # Doppler's gelu join is the tanh form
    if approximate != "none":
        raise ctx.unsupported(f"gelu approximate={approximate!r}")
    return _gelu_erf(ctx, x)


def _gelu_erf(ctx, x):
    """x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, with the dialect's erf join
    (exact to the runtime's erf: SLEEF's 1-ULP erff on the CPU, CUDA's erff)."""
    bld = ctx.builder
    e = bld.unary(bld.unary(x, "scale", 1.0 / math.sqrt(2.0)), "erf")
    s = bld.elementwise("mul", [x, bld.unary(e, "shift", 1.0)], x.shape)
    return bld.unary(s, "scale", 0.5)


@register(torch.log2, ".log2", "aten.log2")
def log2(ctx, input):
    return ctx.builder.unary(ctx.builder.unary(ctx.val(input), "log"), "scale",
                             1.0 / math.log(2.0))


@register(torch.log10, ".log10", "aten.log10")
def log10(ctx, input):
    return ctx.builder.unary(ctx.builder.unary(ctx.val(input), "log"), "scale",
                             1.0 / math.log(10.0))


@register(torch.erf, ".erf", "aten.erf")
def erf(ctx, input):
    return ctx.builder.unary(ctx.val(input), "erf")


# -- activations as modules ----------------------------------------------------

for _cls, _join in ((nn.ReLU, "relu"), (nn.SiLU, "silu"), (nn.Tanh, "tanh"),
                    (nn.Sigmoid, "sigmoid")):
    register_module(_cls)(lambda ctx, module, name, input, _j=_join:
                          ctx.builder.unary(ctx.val(input), _j))


@register_module(nn.GELU)
def gelu_module(ctx, module, name, input):
    return gelu(ctx, input, approximate=getattr(module, "approximate", "none"))

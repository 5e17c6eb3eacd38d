"""Emitters of constant padding (F.pad in constant mode, aten's
constant_pad_nd) and group normalisation (nn.GroupNorm, F.group_norm,
aten's native_group_norm)."""

import math

import torch.nn as nn
import torch.nn.functional as F

from .frontend import Unavailable
from .ops_conv import _pad
from .ops_table import register, register_module


def _constant_pad(ctx, input, pad, value):
    """Pads the last len(pad) / 2 dims (last dim first, as torch orders
    `pad`); negative amounts crop."""
    bld = ctx.builder
    x = ctx.val(input)
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > x.rank:
        raise ctx.unsupported(f"padding {tuple(pad)} of a rank-{x.rank} tensor")
    value = float(value)
    if not math.isfinite(value):
        raise ctx.unsupported(f"padding with {value}")
    source, amounts = x, [(0, 0)] * x.rank
    for k in range(len(pad) // 2):
        d = x.rank - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before < 0 or after < 0:  # crop first
            start, stop = max(-before, 0), x.shape[d] - max(-after, 0)
            if stop <= start:
                raise ctx.unsupported(f"padding {tuple(pad)} crops dim {d} to nothing")
            x = bld.slice(x, d, start, stop - start)
            source = None
        x = _pad(bld, x, d, max(before, 0), max(after, 0), value)
        amounts[d] = (max(before, 0), max(after, 0))
    if source is not None and x.ssa != source.ssa:
        # A convolution of the result may take the padding as its own.
        bld.pads[x.ssa] = (source, list(x.dims), amounts, value)
    return x


@register("aten.constant_pad_nd")
def constant_pad_nd(ctx, input, pad, value=0.0):
    return _constant_pad(ctx, input, pad, value)


@register(F.pad)
def pad(ctx, input, pad, mode="constant", value=None):
    if mode != "constant":
        raise ctx.unsupported(f"padding mode '{mode}' (only constant)")
    return _constant_pad(ctx, input, pad, 0.0 if value is None else value)


def _group_norm(ctx, input, groups, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) over each group of channels and the
    spatial dims, then per-channel weight and bias: x viewed as (N, G,
    C / G, *spatial)."""
    bld = ctx.builder
    x = ctx.val(input)
    if x.rank < 2 or x.shape[1] % groups:
        raise ctx.unsupported(f"group norm of shape {tuple(x.shape)} in {groups} groups")
    n, c, spatial = x.shape[0], x.shape[1], list(x.shape[2:])
    g = bld.reshape(x, [n, groups, c // groups] + spatial)
    axes = list(range(2, g.rank))
    count = math.prod(g.shape[j] for j in axes)
    mu = bld.unary(bld.reduce(g, axes, True, "add"), "scale", 1.0 / count)
    centred = bld.elementwise("sub", [g, mu], g.shape)
    var = bld.unary(bld.reduce(centred, axes, True, "add", join="square"), "scale", 1.0 / count)
    inv = bld.unary(bld.unary(var, "shift", float(eps)), "rsqrt")
    y = bld.reshape(bld.elementwise("mul", [centred, inv], g.shape), list(x.shape))
    channel = [c] + [1] * len(spatial)
    if weight is not None:
        y = bld.elementwise("mul", [y, bld.reshape(ctx.val(weight), channel)], y.shape)
    if bias is not None:
        y = bld.elementwise("add", [y, bld.reshape(ctx.val(bias), channel)], y.shape)
    return y


@register(F.group_norm)
def group_norm(ctx, input, num_groups, weight=None, bias=None, eps=1e-5):
    return _group_norm(ctx, input, int(num_groups), weight, bias, eps)


@register("aten.native_group_norm")
def native_group_norm(ctx, input, weight, bias, n, c, hw, groups, eps):
    y = _group_norm(ctx, input, int(groups), weight, bias, eps)
    return [y, Unavailable("the mean of native_group_norm"),
            Unavailable("the rstd of native_group_norm")]


@register_module(nn.GroupNorm)
def group_norm_module(ctx, module, name, input):
    weight = ctx.param(name + ".weight") if module.affine else None
    bias = ctx.param(name + ".bias") if module.affine else None
    return _group_norm(ctx, input, module.num_groups, weight, bias, module.eps)


__all__ = ["constant_pad_nd", "pad", "group_norm", "native_group_norm", "group_norm_module"]

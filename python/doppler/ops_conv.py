"""Emitters of convolutions (conv1d, conv2d, conv3d): stride 1, zero padding,
any dilation and groups.

A convolution is a sum over the kernel's offsets of contractions: for each
offset (one per kernel element), the input window at that offset (a
`doppler.slice` per spatial dim) is contracted with the weights' column at
that offset over the input channels, and the partial results are added.
That is K einsums and K - 1 adds for a kernel of K elements (per group);
zero padding is an assemble with fills around the input. Strides above 1
need strided slices, which the dialect does not have: an error.
"""

import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

from .ir import LETTERS
from .ops_table import register, register_module


def _per_dim(value, dims, what, ctx):
    if isinstance(value, int):
        return [value] * dims
    value = [int(v) for v in value]
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise ctx.unsupported(f"convolution {what} {tuple(value)} for {dims} spatial dims")
    return value


def _pad(bld, x, dim, before, after):
    """Zeros around logical dim `dim` of `x`."""
    if before == 0 and after == 0:
        return x
    parts = []
    for extent in (before, None, after):
        if extent is None:
            parts.append(x)
        elif extent > 0:
            shape = list(x.shape)
            shape[dim] = extent
            parts.append(bld.materialize(bld.fill(0.0, shape)))
    return bld.concat([bld.materialize(p) for p in parts], dim)


def _convolution(ctx, input, weight, bias, stride, padding, dilation, groups):
    bld = ctx.builder
    x, w = ctx.val(input), ctx.val(weight, "weight")
    spatial = w.rank - 2
    if spatial < 1 or spatial > 3:
        raise ctx.unsupported(f"convolution with a rank-{w.rank} weight")
    batched = x.rank == spatial + 2
    if not batched and x.rank != spatial + 1:
        raise ctx.unsupported(f"convolution of a rank-{x.rank} input with a rank-{w.rank} "
                              "weight")
    if not batched:  # (C, *spatial): a batch of one
        x = bld.reshape(x, [1] + list(x.shape))
    stride = _per_dim(stride, spatial, "stride", ctx)
    dilation = _per_dim(dilation, spatial, "dilation", ctx)
    if any(s != 1 for s in stride):
        raise ctx.unsupported(f"convolution with stride {tuple(stride)} (strided slices "
                              "are not expressible; only stride 1)")
    kernel = list(w.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * spatial
        elif padding == "same":
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            raise ctx.unsupported(f"convolution padding '{padding}'")
    else:
        pads = [(p, p) for p in _per_dim(padding, spatial, "padding", ctx)]
    for j, (before, after) in enumerate(pads):
        x = _pad(bld, x, 2 + j, before, after)
    n, c = x.shape[0], x.shape[1]
    out_channels, group_channels = w.shape[0], w.shape[1]
    if groups < 1 or c != group_channels * groups or out_channels % groups:
        raise ctx.unsupported(f"convolution of {c} channels with a weight of shape "
                              f"{tuple(w.shape)} in {groups} groups")
    out_spatial = [x.shape[2 + j] - dilation[j] * (kernel[j] - 1) for j in range(spatial)]
    if any(e < 1 for e in out_spatial):
        raise ctx.unsupported(f"convolution kernel {tuple(kernel)} larger than its padded "
                              f"input {tuple(x.shape[2:])}")
    per_group = out_channels // groups
    letters = iter(LETTERS)
    nl, cl, ol = next(letters), next(letters), next(letters)
    sl = [next(letters) for _ in range(spatial)]
    kl = [next(letters) for _ in range(spatial)]
    outputs = []
    for g in range(groups):
        xg = bld.slice(x, 1, g * group_channels, group_channels)
        wg = bld.slice(w, 0, g * per_group, per_group)
        shape = [n, per_group] + out_spatial
        total = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            window = xg
            column = wg
            for j in range(spatial):
                window = bld.slice(window, 2 + j, offset[j] * dilation[j], out_spatial[j])
                column = bld.slice(column, 2 + j, offset[j], 1)
            part = bld.einsum([(window, nl + cl + "".join(sl)),
                               (column, ol + cl + "".join(kl))],
                              nl + ol + "".join(sl), shape, "mul", agg="add")
            total = part if total is None else bld.elementwise("add", [total, part], shape)
        outputs.append(total)
    y = bld.concat(outputs, 1) if groups > 1 else outputs[0]
    if bias is not None:
        b = ctx.val(bias, "bias")
        y = bld.elementwise("add", [y, bld.reshape(b, [out_channels] + [1] * spatial)],
                            y.shape)
    if not batched:
        y = bld.reshape(y, list(y.shape[1:]))
    return y


@register(F.conv1d, F.conv2d, F.conv3d, torch.conv1d, torch.conv2d, torch.conv3d)
def conv(ctx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution(ctx, input, weight, bias, stride, padding, dilation, groups)


@register("aten.convolution")
def aten_convolution(ctx, input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups):
    if transposed:
        raise ctx.unsupported("transposed convolution")
    return _convolution(ctx, input, weight, bias, stride, padding, dilation, groups)


@register_module(nn.Conv1d, nn.Conv2d, nn.Conv3d)
def conv_module(ctx, module, name, input):
    if module.padding_mode != "zeros":
        raise ctx.unsupported(f"convolution padding_mode '{module.padding_mode}' (only "
                              "zeros)")
    weight = ctx.param(name + ".weight")
    bias = ctx.param(name + ".bias") if module.bias is not None else None
    return _convolution(ctx, input, weight, bias, module.stride, module.padding,
                        module.dilation, module.groups)


__all__ = ["conv", "aten_convolution", "conv_module"]

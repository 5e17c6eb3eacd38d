"""Emitters of sliding-window ops: convolutions (conv1d/2d/3d) and pooling
(max and average pooling, adaptive average pooling to sizes that divide the
input).

A convolution is a sum over the kernel's offsets of contractions: for each
offset (one per kernel element), the input window at that offset is
contracted with the weights' column at that offset over the input channels,
and the partial results are added: K einsums and K - 1 adds for a kernel of
K elements (per group). Pooling takes the max (or the sum, scaled) of the
same windows. A window is a `doppler.slice` per spatial dim; a stride above
1 needs the elements start, start + s, ...: the dialect has no strided
slice, so that is a slice per element and an assemble, taken once per
residue of the offsets modulo the stride and shared by the offsets. Padding
is an assemble with fills around the input (zeros; for max pooling the
dtype's lowest value, which a window never takes alone since torch keeps
padding at most half the kernel).
"""

import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Unavailable
from .ir import LETTERS
from .ops_table import register, register_module


def _per_dim(ctx, value, dims, what):
    if isinstance(value, int):
        return [value] * dims
    value = [int(v) for v in value]
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise ctx.unsupported(f"{what} {tuple(value)} for {dims} spatial dims")
    return value


def _pad(bld, x, dim, before, after, value=0.0):
    """`value` around logical dim `dim` of `x`."""
    if before == 0 and after == 0:
        return x
    parts = []
    for extent in (before, None, after):
        if extent is None:
            parts.append(x)
        elif extent > 0:
            shape = list(x.shape)
            shape[dim] = extent
            parts.append(bld.fill(value, shape))
    return bld.concat([bld.materialize(p) for p in parts], dim)


def _take_strided(bld, x, dim, start, step, count):
    """Elements start, start + step, ... (`count` of them) of logical dim
    `dim`: a slice for step 1, else a slice per element and an assemble."""
    if step == 1 or count == 1:
        return bld.slice(x, dim, start, count)
    return bld.concat([bld.materialize(bld.slice(x, dim, start + k * step, 1))
                       for k in range(count)], dim)


def _windows(ctx, x, kernel, stride, dilation, pads, fill=0.0):
    """The windows of a sliding-window op over the trailing spatial dims of
    `x` (N, C, *spatial, or N, G, C, *spatial): (offsets, windows,
    out_spatial), one (..., *out_spatial) window per kernel offset."""
    bld = ctx.builder
    spatial = len(kernel)
    first = x.rank - spatial
    for j, (before, after) in enumerate(pads):
        x = _pad(bld, x, first + j, before, after, fill)
    out_spatial = []
    for j in range(spatial):
        reach = dilation[j] * (kernel[j] - 1) + 1
        if x.shape[first + j] < reach:
            raise ctx.unsupported(f"kernel {tuple(kernel)} (dilation {tuple(dilation)}) "
                                  f"larger than its padded input {tuple(x.shape[first:])}")
        out_spatial.append((x.shape[first + j] - reach) // stride[j] + 1)
    # Dim by dim: the strided elements once per residue, then a slice per
    # offset, for every window of the dims before.
    windows = {(): x}
    for j in range(spatial):
        step = stride[j]
        following = {}
        for prefix, val in windows.items():
            taken = {}
            for k in range(kernel[j]):
                start = k * dilation[j]
                residue, shift = start % step, start // step
                if residue not in taken:
                    extent = (val.shape[first + j] - residue + step - 1) // step
                    taken[residue] = _take_strided(bld, val, first + j, residue, step, extent)
                following[prefix + (k,)] = bld.slice(taken[residue], first + j, shift,
                                                     out_spatial[j])
        windows = following
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    return offsets, [windows[o] for o in offsets], out_spatial


def _paddings(ctx, padding, kernel, dilation, stride):
    spatial = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * spatial
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ctx.unsupported("padding 'same' with a stride above 1")
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return pads
        raise ctx.unsupported(f"padding '{padding}'")
    return [(p, p) for p in _per_dim(ctx, padding, spatial, "padding")]


def _batched(ctx, x, spatial, what):
    """`x` as (N, C, *spatial) (an unbatched (C, *spatial) gets a batch of
    one) and whether it was batched."""
    if x.rank == spatial + 2:
        return x, True
    if x.rank != spatial + 1:
        raise ctx.unsupported(f"{what} of a rank-{x.rank} input over {spatial} spatial dims")
    return ctx.builder.reshape(x, [1] + list(x.shape)), False


def _unbatched(ctx, y, batched):
    return y if batched else ctx.builder.reshape(y, list(y.shape[1:]))


# -- convolution ----------------------------------------------------------------


def _convolution(ctx, input, weight, bias, stride, padding, dilation, groups):
    bld = ctx.builder
    w = ctx.val(weight, "weight")
    spatial = w.rank - 2
    if spatial < 1 or spatial > 3:
        raise ctx.unsupported(f"convolution with a rank-{w.rank} weight")
    x, batched = _batched(ctx, ctx.val(input), spatial, "convolution")
    stride = _per_dim(ctx, stride, spatial, "convolution stride")
    dilation = _per_dim(ctx, dilation, spatial, "convolution dilation")
    kernel = list(w.shape[2:])
    pads = _paddings(ctx, padding, kernel, dilation, stride)
    n, c = x.shape[0], x.shape[1]
    out_channels, group_channels = w.shape[0], w.shape[1]
    if groups < 1 or c != group_channels * groups or out_channels % groups:
        raise ctx.unsupported(f"convolution of {c} channels with a weight of shape "
                              f"{tuple(w.shape)} in {groups} groups")
    per_group = out_channels // groups
    letters = iter(LETTERS)
    nl, gl, cl, ol = next(letters), next(letters), next(letters), next(letters)
    sl = "".join(next(letters) for _ in range(spatial))
    kl = "".join(next(letters) for _ in range(spatial))
    if groups > 1:
        # Groups as a batch dim: x as (N, G, C/G, *s), the weight as (G, O/G,
        # C/G, *k): one einsum per kernel offset for all groups (a depthwise
        # convolution's channel split is free: C/G = 1).
        x = bld.reshape(x, [n, groups, group_channels] + list(x.shape[2:]))
        shape_w = [groups, per_group, group_channels] + kernel
        w = ctx.reshaped_argument(w, shape_w) or bld.reshape(w, shape_w)
        x_letters, w_letters, y_letters = nl + gl + cl + sl, gl + ol + cl + kl, nl + gl + ol + sl
    else:
        x_letters, w_letters, y_letters = nl + cl + sl, ol + cl + kl, nl + ol + sl
    offsets, windows, out_spatial = _windows(ctx, x, kernel, stride, dilation, pads)
    shape = [n] + ([groups] if groups > 1 else []) + [per_group] + out_spatial
    first = w.rank - spatial
    y = None
    for offset, window in zip(offsets, windows):
        column = w
        for j in range(spatial):
            column = bld.slice(column, first + j, offset[j], 1)
        part = bld.einsum([(window, x_letters), (column, w_letters)], y_letters, shape, "mul",
                          agg="add")
        y = part if y is None else bld.elementwise("add", [y, part], shape)
    if groups > 1:
        y = bld.reshape(y, [n, out_channels] + out_spatial)
    if bias is not None:
        b = ctx.val(bias, "bias")
        y = bld.elementwise("add", [y, bld.reshape(b, [out_channels] + [1] * spatial)],
                            y.shape)
    return _unbatched(ctx, y, batched)


@register(F.conv1d, F.conv2d, F.conv3d, torch.conv1d, torch.conv2d, torch.conv3d,
          "aten.conv1d", "aten.conv2d", "aten.conv3d")
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


# -- pooling --------------------------------------------------------------------


def _pool(ctx, input, spatial, kind, kernel_size, stride, padding, dilation=1,
          ceil_mode=False, count_include_pad=True, divisor_override=None):
    bld = ctx.builder
    what = f"{kind} pooling"
    if ceil_mode:
        raise ctx.unsupported(f"{what} with ceil_mode=True")
    x, batched = _batched(ctx, ctx.val(input), spatial, what)
    kernel = _per_dim(ctx, kernel_size, spatial, f"{what} kernel")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and
                                          len(stride) == 0) else \
        _per_dim(ctx, stride, spatial, f"{what} stride")
    dilation = _per_dim(ctx, dilation, spatial, f"{what} dilation")
    pads = [(p, p) for p in _per_dim(ctx, padding, spatial, f"{what} padding")]
    padded = any(p for p, _ in pads)
    if kind == "average" and padded and not count_include_pad and divisor_override is None:
        raise ctx.unsupported("average pooling with padding and count_include_pad=False")
    fill = float(torch.finfo(ctx.dtype).min) if kind == "max" else 0.0
    offsets, windows, out_spatial = _windows(ctx, x, kernel, stride, dilation, pads, fill)
    shape = [x.shape[0], x.shape[1]] + out_spatial
    join = "max" if kind == "max" else "add"
    y = windows[0]
    for window in windows[1:]:
        y = bld.elementwise(join, [y, window], shape)
    if kind == "average":
        divisor = divisor_override or len(offsets)
        y = bld.unary(y, "scale", 1.0 / divisor)
    return _unbatched(ctx, y, batched)


def _max_pool(spatial):
    def emit(ctx, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             return_indices=False):
        if return_indices:
            raise ctx.unsupported("max pooling with return_indices=True")
        return _pool(ctx, input, spatial, "max", kernel_size, stride, padding, dilation,
                     ceil_mode)
    return emit


def _avg_pool(spatial):
    def emit(ctx, input, kernel_size, stride=None, padding=0, ceil_mode=False,
             count_include_pad=True, divisor_override=None):
        return _pool(ctx, input, spatial, "average", kernel_size, stride, padding, 1,
                     ceil_mode, count_include_pad, divisor_override)
    return emit


def _max_pool_with_indices(spatial):
    """aten's max_pool2d/3d_with_indices: the values; the indices are not
    computed."""
    def emit(ctx, input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        y = _pool(ctx, input, spatial, "max", kernel_size, stride, padding, dilation,
                  ceil_mode)
        return [y, Unavailable("the indices of max pooling")]
    return emit


for _spatial, _max_targets, _avg_targets in (
        (1, (F.max_pool1d, torch.max_pool1d, "aten.max_pool1d"),
         (F.avg_pool1d, torch.avg_pool1d, "aten.avg_pool1d")),
        (2, (F.max_pool2d, torch.max_pool2d, "aten.max_pool2d"),
         (F.avg_pool2d, "aten.avg_pool2d")),
        (3, (F.max_pool3d, torch.max_pool3d, "aten.max_pool3d"),
         (F.avg_pool3d, "aten.avg_pool3d"))):
    register(*_max_targets)(_max_pool(_spatial))
    register(*_avg_targets)(_avg_pool(_spatial))
    if _spatial > 1:
        register(f"aten.max_pool{_spatial}d_with_indices")(_max_pool_with_indices(_spatial))

# The spatial dims of the pooling modules.
_MODULE_SPATIAL = {
    nn.MaxPool1d: 1, nn.MaxPool2d: 2, nn.MaxPool3d: 3,
    nn.AvgPool1d: 1, nn.AvgPool2d: 2, nn.AvgPool3d: 3,
    nn.AdaptiveAvgPool1d: 1, nn.AdaptiveAvgPool2d: 2, nn.AdaptiveAvgPool3d: 3,
}


@register_module(nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)
def max_pool_module(ctx, module, name, input):
    return _max_pool(_MODULE_SPATIAL[type(module)])(
        ctx, input, module.kernel_size, module.stride, module.padding, module.dilation,
        module.ceil_mode, module.return_indices)


@register_module(nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d)
def avg_pool_module(ctx, module, name, input):
    return _avg_pool(_MODULE_SPATIAL[type(module)])(
        ctx, input, module.kernel_size, module.stride, module.padding, module.ceil_mode,
        module.count_include_pad, getattr(module, "divisor_override", None))


def _adaptive_avg_pool(ctx, input, output_size, spatial):
    """Adaptive average pooling to sizes that divide the input's: an average
    pooling with kernel = stride = input / output (1: a mean)."""
    x = ctx.val(input)
    sizes = _per_dim(ctx, output_size, spatial, "adaptive pooling output size")
    extents = x.shape[x.rank - spatial:]
    sizes = [e if s is None else s for s, e in zip(sizes, extents)]
    if any(e % s for s, e in zip(sizes, extents)):
        raise ctx.unsupported(f"adaptive average pooling of {tuple(extents)} to "
                              f"{tuple(sizes)} (only sizes that divide the input's)")
    kernel = [e // s for s, e in zip(sizes, extents)]
    return _pool(ctx, x, spatial, "average", kernel, kernel, 0)


def _adaptive(spatial):
    def emit(ctx, input, output_size):
        return _adaptive_avg_pool(ctx, input, output_size, spatial)
    return emit


register(F.adaptive_avg_pool1d, torch.adaptive_avg_pool1d, "aten.adaptive_avg_pool1d")(
    _adaptive(1))
register(F.adaptive_avg_pool2d, "aten.adaptive_avg_pool2d", "aten._adaptive_avg_pool2d")(
    _adaptive(2))
register(F.adaptive_avg_pool3d, "aten.adaptive_avg_pool3d", "aten._adaptive_avg_pool3d")(
    _adaptive(3))


@register_module(nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d)
def adaptive_avg_pool_module(ctx, module, name, input):
    return _adaptive_avg_pool(ctx, input, module.output_size, _MODULE_SPATIAL[type(module)])


__all__ = ["conv", "aten_convolution", "conv_module", "max_pool_module",
           "avg_pool_module", "adaptive_avg_pool_module"]

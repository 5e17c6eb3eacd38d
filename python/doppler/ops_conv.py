"""Emitters of sliding-window ops: convolutions (conv1d/2d/3d) and pooling
(max and average pooling, adaptive pooling to sizes that divide the input).

Two forms, chosen by `window_ops()` (the environment variable
DOPPLER_WINDOW_OPS: unset or 1, the first; 0, the second):

- *window ops*: one `doppler.conv` per convolution (groups, depthwise,
  strides, dilations, padding; a bias is a broadcast add after it) and one
  `doppler.pool` per pooling (max or avg; ceil_mode as extra high padding;
  count_include_pad=False and divisor_override as the avg pool times a
  host-computed correction of the divisor per output position). A
  pointwise convolution (1x1 kernel, stride 1, no padding) stays one einsum
  (it is a contraction over the channels, and keeps its input's view).
- *expansion* (DOPPLER_WINDOW_OPS=0: for tools that lack the window ops): a
  convolution is a sum over the kernel's offsets of contractions: for each
  offset (one per kernel element), the input window at that offset is
  contracted with the weights' column at that offset over the input
  channels, and the partial results are added: K einsums and K - 1 adds for
  a kernel of K elements (per group). Pooling takes the max (or the sum,
  scaled) of the same windows. A window is a `doppler.slice` per spatial
  dim; a stride above 1 needs the elements start, start + s, ...: the
  dialect has no strided slice, so that is a slice per element and an
  assemble, taken once per residue of the offsets modulo the stride and
  shared by the offsets. Padding is an assemble with fills around the input
  (zeros; for max pooling the dtype's lowest value, which a window never
  takes alone since torch keeps padding at most half the kernel). A
  convolution or pooling whose kernel equals its stride, without padding or
  dilation (a ViT's patch embedding), is a reshape and one einsum.

Global pooling (one output per channel) is one einsum reduction in both.
"""

import itertools
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Unavailable
from .ir import LETTERS
from .ops_index import adaptive_average, take
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


def _blocked(bld, x, dim, step):
    """x with logical dim `dim` (extent E) as (ceil(E / step), step): padded
    at the end (the padding is never read) and reshaped."""
    extent = x.shape[dim]
    blocks = -(-extent // step)
    if blocks * step != extent:
        x = _pad(bld, x, dim, 0, blocks * step - extent)
    return bld.reshape(x, list(x.shape[:dim]) + [blocks, step] + list(x.shape[dim + 1:]))


def _residue(bld, blocked, dim, residue, count):
    """Elements residue, residue + step, ... (`count` of them) of the dim
    `_blocked` split: one slice of both dims and a reshape dropping the unit
    dim."""
    v = bld.defactor(blocked)
    outer, inner = v.dims[dim], v.dims[dim + 1]
    if isinstance(outer, int) and isinstance(inner, int):
        offsets, sizes = [0] * len(v.phys), list(v.phys)
        offsets[inner], sizes[inner] = residue, 1
        sizes[outer] = count
        v = bld.slice_phys(v, offsets, sizes)
    else:
        v = bld.slice(bld.slice(v, dim + 1, residue, 1), dim, 0, count)
    return bld.drop_dims(v, [dim + 1])


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
            blocked = None
            for k in range(kernel[j]):
                start = k * dilation[j]
                residue, shift = start % step, start // step
                if residue not in taken:
                    extent = (val.shape[first + j] - residue + step - 1) // step
                    if extent <= 3:
                        taken[residue] = _take_strided(bld, val, first + j, residue, step,
                                                       extent)
                    else:
                        # Longer runs: the dim reshaped into blocks of `step`
                        # once, then a slice and a reshape per residue.
                        if blocked is None:
                            blocked = _blocked(bld, val, first + j, step)
                        taken[residue] = _residue(bld, blocked, first + j, residue, extent)
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


# -- the form -------------------------------------------------------------------


def window_ops():
    """Whether convolutions and pooling are emitted as doppler.conv and
    doppler.pool (the default; DOPPLER_WINDOW_OPS unset or 1) rather than
    expanded into slices and einsums (DOPPLER_WINDOW_OPS=0)."""
    return os.environ.get("DOPPLER_WINDOW_OPS", "1").strip().lower() not in (
        "0", "false", "no", "off")


def _low_high(pads):
    """[(low, high)] per spatial dim -> the window ops' list: lows, then highs."""
    return [lo for lo, _ in pads] + [hi for _, hi in pads]


def _patches(ctx, x, kernel, stride, dilation, pads):
    """x (N, C, *spatial) as (N, C, O1, K1, O2, K2, ...) when the windows tile
    it (kernel = stride, no dilation, no padding): a slice of the rows no
    window reads, if any, and a reshape. None otherwise."""
    if list(kernel) != list(stride) or any(d != 1 for d in dilation) or \
            any(lo or hi for lo, hi in pads):
        return None
    bld = ctx.builder
    first = x.rank - len(kernel)
    out = [e // k for e, k in zip(x.shape[first:], kernel)]
    if any(o == 0 for o in out):
        return None
    for j, (o, k) in enumerate(zip(out, kernel)):
        x = bld.slice(x, first + j, 0, o * k)
    shape = list(x.shape[:first])
    for o, k in zip(out, kernel):
        shape += [o, k]
    return bld.reshape(x, shape), out


# -- convolution ----------------------------------------------------------------


def _fold_padding(bld, x, pads):
    """(x, pads), or where x is a zero padding (F.pad, constant_pad_nd: torch
    2 writes padding='same' with an even kernel so) of spatial dims only,
    its input and the pads with that padding added."""
    padded = bld.pads.get(x.ssa)
    if padded is None:
        return x, pads
    source, dims, amounts, value = padded
    spatial = len(pads)
    if value != 0.0 or dims != x.dims or \
            any(a or b for a, b in amounts[:len(amounts) - spatial]):
        return x, pads
    extra = amounts[len(amounts) - spatial:]
    return source, [(lo + a, hi + b) for (lo, hi), (a, b) in zip(pads, extra)]


def _convolution(ctx, input, weight, bias, stride, padding, dilation, groups):
    bld = ctx.builder
    w = ctx.val(weight, "weight")
    spatial = w.rank - 2
    if spatial < 1 or spatial > 3:
        raise ctx.unsupported(f"convolution with a rank-{w.rank} weight")
    x = ctx.val(input)
    stride = _per_dim(ctx, stride, spatial, "convolution stride")
    dilation = _per_dim(ctx, dilation, spatial, "convolution dilation")
    kernel = list(w.shape[2:])
    pads = _paddings(ctx, padding, kernel, dilation, stride)
    x, pads = _fold_padding(bld, x, pads)
    x, batched = _batched(ctx, x, spatial, "convolution")
    c = x.shape[1]
    out_channels, group_channels = w.shape[0], w.shape[1]
    if groups < 1 or c != group_channels * groups or out_channels % groups:
        raise ctx.unsupported(f"convolution of {c} channels with a weight of shape "
                              f"{tuple(w.shape)} in {groups} groups")
    for j in range(spatial):
        if x.shape[2 + j] + sum(pads[j]) < dilation[j] * (kernel[j] - 1) + 1:
            raise ctx.unsupported(f"kernel {tuple(kernel)} (dilation {tuple(dilation)}) "
                                  f"larger than its padded input {tuple(x.shape[2:])}")
    pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in stride) and \
        not any(lo or hi for lo, hi in pads)
    if window_ops() and not pointwise:
        y = bld.conv(x, w, stride, dilation, _low_high(pads), groups)
    else:  # a pointwise convolution is one contraction in either form
        y = _expanded_convolution(ctx, x, w, stride, dilation, pads, groups)
    if bias is not None:
        b = ctx.val(bias, "bias")
        y = bld.elementwise("add", [y, bld.reshape(b, [out_channels] + [1] * spatial)],
                            y.shape)
    return _unbatched(ctx, y, batched)


def _expanded_convolution(ctx, x, w, stride, dilation, pads, groups):
    """The convolution as einsums over the windows of its kernel offsets."""
    bld = ctx.builder
    spatial = w.rank - 2
    kernel = list(w.shape[2:])
    n = x.shape[0]
    out_channels, group_channels = w.shape[0], w.shape[1]
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
    patches = _patches(ctx, x, kernel, stride, dilation, pads)
    if patches is not None:
        # Kernel = stride, no padding: every input element in one window.
        x, out_spatial = patches
        x_letters = x_letters[:-spatial] + "".join(a + b for a, b in zip(sl, kl))
        shape = [n] + ([groups] if groups > 1 else []) + [per_group] + out_spatial
        y = bld.einsum([(x, x_letters), (w, w_letters)], y_letters, shape, "mul", agg="add")
    else:
        offsets, windows, out_spatial = _windows(ctx, x, kernel, stride, dilation, pads)
        shape = [n] + ([groups] if groups > 1 else []) + [per_group] + out_spatial
        first = w.rank - spatial
        y = None
        for offset, window in zip(offsets, windows):
            column = w
            for j in range(spatial):
                column = bld.slice(column, first + j, offset[j], 1)
            part = bld.einsum([(window, x_letters), (column, w_letters)], y_letters, shape,
                              "mul", agg="add")
            y = part if y is None else bld.elementwise("add", [y, part], shape)
    if groups > 1:
        y = bld.reshape(y, [n, out_channels] + out_spatial)
    return y


@register(F.conv1d, F.conv2d, F.conv3d, torch.conv1d, torch.conv2d, torch.conv3d,
          "aten.conv1d", "aten.conv2d", "aten.conv3d")
def conv(ctx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution(ctx, input, weight, bias, stride, padding, dilation, groups)


def _transposed_convolution(ctx, input, weight, bias, stride, padding, dilation,
                            output_padding, groups):
    """A transposed convolution as the convolution it is the adjoint of:
    the input with stride - 1 zeros between its elements (a concat with
    fills and a reshape per strided dim), padded by dilation * (k - 1) -
    padding (plus output_padding at the end; cropped where negative), and
    convolved at stride 1 with the weight's in/out channels swapped per
    group and its kernel flipped (a gather per spatial dim). Its work is
    that of the convolution over the zero-filled input (stride^d times the
    transposed one's)."""
    bld = ctx.builder
    w, x = ctx.val(weight, "weight"), ctx.val(input)
    spatial = w.rank - 2
    if x.rank != spatial + 2:
        raise ctx.unsupported("a transposed convolution of an unbatched input")
    stride = _per_dim(ctx, stride, spatial, "stride")
    dilation = _per_dim(ctx, dilation, spatial, "dilation")
    padding = _per_dim(ctx, padding, spatial, "padding")
    extra = _per_dim(ctx, output_padding, spatial, "output_padding")
    kernel = list(w.shape[2:])
    for j in range(spatial):
        d, s, n = 2 + j, stride[j], x.shape[2 + j]
        if s > 1:
            column = list(x.shape[:d + 1]) + [1] + list(x.shape[d + 1:])
            zeros = list(column)
            zeros[d + 1] = s - 1
            both = bld.concat([bld.materialize(bld.reshape(x, column)),
                               bld.fill(0.0, zeros)], d + 1)
            merged = list(x.shape)
            merged[d] = n * s
            x = bld.slice(bld.reshape(both, merged), d, 0, (n - 1) * s + 1)
        low = dilation[j] * (kernel[j] - 1) - padding[j]
        high = low + extra[j]
        if low < 0 or high < 0:
            x = bld.slice(x, d, max(-low, 0), x.shape[d] - max(-low, 0) - max(-high, 0))
        x = _pad(bld, x, d, max(low, 0), max(high, 0))
    c_in, c_out = w.shape[0], w.shape[1]
    grouped = bld.reshape(w, [groups, c_in // groups, c_out] + kernel)
    swapped = grouped.with_dims([grouped.dims[0], grouped.dims[2], grouped.dims[1]] +
                                grouped.dims[3:])
    w = bld.reshape(swapped, [groups * c_out, c_in // groups] + kernel)
    for j, k in enumerate(kernel):
        w = take(ctx, w, 2 + j, list(range(k - 1, -1, -1)), f"flip{j}")
    return _convolution(ctx, x, w, bias, 1, 0, dilation, groups)


@register("aten.convolution", "aten._convolution")
def aten_convolution(ctx, input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups, *flags):
    if transposed:
        return _transposed_convolution(ctx, input, weight, bias, stride, padding, dilation,
                                       output_padding, groups)
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


@register_module(nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
def conv_transpose_module(ctx, module, name, input, output_size=None):
    if output_size is not None:
        raise ctx.unsupported("a transposed convolution called with output_size")
    weight = ctx.param(name + ".weight")
    bias = ctx.param(name + ".bias") if module.bias is not None else None
    return _transposed_convolution(ctx, input, weight, bias, module.stride, module.padding,
                                   module.dilation, module.output_padding, module.groups)


@register(F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d, "aten.conv_transpose1d",
          "aten.conv_transpose2d", "aten.conv_transpose3d")
def conv_transpose(ctx, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                   groups=1, dilation=1):
    return _transposed_convolution(ctx, input, weight, bias, stride, padding, dilation,
                                   output_padding, groups)


# -- pooling --------------------------------------------------------------------


def _ceil_extra(extent, kernel, stride, dilation, low, high):
    """The high padding ceil_mode=True adds: PyTorch's output extent
    ceil((S + low + high - d (K - 1) - 1) / s) + 1, less one when the last
    window would start in the high padding, as extra high padding."""
    reach = dilation * (kernel - 1) + 1
    span = extent + low + high - reach
    out = -(-span // stride) + 1
    if (out - 1) * stride >= extent + low:
        out -= 1
    return max((out - 1) * stride + reach - (extent + low + high), 0)


def _divisor_correction(kernel, stride, pads, extra, extents, count_include_pad,
                        divisor_override):
    """kernel volume / PyTorch's divisor at each output position (a tensor
    [O1, ...], or a number where it is the same everywhere), or None when it
    is 1: an avg pool (the window sum over the kernel volume) times it is
    PyTorch's average pooling."""
    volume = math.prod(kernel)
    if divisor_override:
        return None if divisor_override == volume else volume / divisor_override
    counts = []
    for k, s, (lo, hi), e, x in zip(kernel, stride, pads, extra, extents):
        out = (x + lo + hi + e - k) // s + 1
        start = torch.arange(out) * s - lo
        end = torch.minimum(start + k, torch.tensor(x + hi))  # PyTorch's window end
        if not count_include_pad:
            start, end = start.clamp(min=0), end.clamp(max=x)
        counts.append((end - start).to(torch.float64))
    divisor = counts[0]
    for c in counts[1:]:
        divisor = divisor[..., None] * c
    if bool((divisor == volume).all()):
        return None
    return volume / divisor.clamp(min=1)


def _pool(ctx, input, spatial, kind, kernel_size, stride, padding, dilation=1,
          ceil_mode=False, count_include_pad=True, divisor_override=None):
    bld = ctx.builder
    what = f"{kind} pooling"
    x, batched = _batched(ctx, ctx.val(input), spatial, what)
    kernel = _per_dim(ctx, kernel_size, spatial, f"{what} kernel")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and
                                          len(stride) == 0) else \
        _per_dim(ctx, stride, spatial, f"{what} stride")
    dilation = _per_dim(ctx, dilation, spatial, f"{what} dilation")
    pads = [(p, p) for p in _per_dim(ctx, padding, spatial, f"{what} padding")]
    extents = list(x.shape[2:])
    for j in range(spatial):
        if extents[j] + sum(pads[j]) < dilation[j] * (kernel[j] - 1) + 1:
            raise ctx.unsupported(f"kernel {tuple(kernel)} (dilation {tuple(dilation)}) "
                                  f"larger than its padded input {tuple(extents)}")
    extra = [_ceil_extra(extents[j], kernel[j], stride[j], dilation[j], *pads[j])
             if ceil_mode else 0 for j in range(spatial)]
    correction = None
    if kind == "average":
        correction = _divisor_correction(kernel, stride, pads, extra, extents,
                                         count_include_pad, divisor_override)
    padded = [(lo, hi + e) for (lo, hi), e in zip(pads, extra)]
    if window_ops():
        y = bld.pool("max" if kind == "max" else "avg", x, kernel, stride, dilation,
                     _low_high(padded))
    else:
        y = _expanded_pool(ctx, x, kind, kernel, stride, dilation, padded)
    if isinstance(correction, float):
        y = bld.unary(y, "scale", correction)
    elif correction is not None:
        name = ctx.node.name
        factor = ctx.argument(("pool_divisor", name), f"{name}.divisor", "constant",
                              (2, name), correction.to(ctx.dtype),
                              f"divisor correction of '{name}'")
        y = bld.elementwise("mul", [y, factor], y.shape)
    return _unbatched(ctx, y, batched)


def _expanded_pool(ctx, x, kind, kernel, stride, dilation, pads):
    """Pooling as elementwise max (or add, scaled) of its windows."""
    bld = ctx.builder
    spatial = len(kernel)
    join = "max" if kind == "max" else "add"
    patches = _patches(ctx, x, kernel, stride, dilation, pads)
    if patches is not None:
        # Kernel = stride, no padding: a reduction over the kernel dims.
        p, out_spatial = patches
        letters = LETTERS[:p.rank]
        out = letters[:2] + "".join(letters[2 + 2 * j] for j in range(spatial))
        shape = list(x.shape[:2]) + out_spatial
        scalar = 1.0 / math.prod(kernel) if kind != "max" else None
        return bld.einsum([(p, letters)], out, shape, "scale" if scalar else "identity",
                          agg=join, scalar=scalar)
    fill = float(torch.finfo(ctx.dtype).min) if kind == "max" else 0.0
    offsets, windows, out_spatial = _windows(ctx, x, kernel, stride, dilation, pads, fill)
    shape = [x.shape[0], x.shape[1]] + out_spatial
    y = windows[0]
    for window in windows[1:]:
        y = bld.elementwise(join, [y, window], shape)
    if kind == "average":
        y = bld.unary(y, "scale", 1.0 / len(offsets))
    return y


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
    """aten's max_pool1d/2d/3d_with_indices: the values; the indices are not
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
    register(f"aten.max_pool{_spatial}d_with_indices")(_max_pool_with_indices(_spatial))

# The spatial dims of the pooling modules.
_MODULE_SPATIAL = {
    nn.MaxPool1d: 1, nn.MaxPool2d: 2, nn.MaxPool3d: 3,
    nn.AvgPool1d: 1, nn.AvgPool2d: 2, nn.AvgPool3d: 3,
    nn.AdaptiveAvgPool1d: 1, nn.AdaptiveAvgPool2d: 2, nn.AdaptiveAvgPool3d: 3,
    nn.AdaptiveMaxPool1d: 1, nn.AdaptiveMaxPool2d: 2, nn.AdaptiveMaxPool3d: 3,
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


def _adaptive_pool(ctx, input, output_size, spatial, kind):
    """Adaptive pooling to sizes that divide the input's: a pooling with
    kernel = stride = input / output; to one element per channel (global
    pooling), one einsum reduction; average pooling to other sizes: an
    einsum per dim with torch's averaging matrix (ops_index)."""
    x = ctx.val(input)
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    if len(sizes) == 1:
        sizes = sizes * spatial
    if len(sizes) != spatial:
        raise ctx.unsupported(f"adaptive pooling output size {tuple(sizes)} for {spatial} "
                              "spatial dims")
    extents = x.shape[x.rank - spatial:]
    sizes = [e if s is None else int(s) for s, e in zip(sizes, extents)]
    if any(s < 1 for s in sizes):
        raise ctx.unsupported(f"adaptive {kind} pooling to {tuple(sizes)}")
    if any(e % s for s, e in zip(sizes, extents)):
        if kind != "max":  # bins of different sizes, or overlapping: a matrix per dim
            return adaptive_average(ctx, x, sizes)
        raise ctx.unsupported(f"adaptive {kind} pooling of {tuple(extents)} to "
                              f"{tuple(sizes)} (only sizes that divide the input's)")
    kernel = [e // s for s, e in zip(sizes, extents)]
    if all(s == 1 for s in sizes):
        bld = ctx.builder
        keep = x.rank - spatial
        axes = range(keep, x.rank)
        if kind == "max":
            return bld.reduce(x, axes, True, "max")
        return bld.mean(x, axes, True)
    return _pool(ctx, x, spatial, kind, kernel, kernel, 0)


def _adaptive(spatial, kind, indices=False):
    def emit(ctx, input, output_size, return_indices=False):
        if return_indices:
            raise ctx.unsupported("adaptive max pooling with return_indices=True")
        y = _adaptive_pool(ctx, input, output_size, spatial, kind)
        return [y, Unavailable("the indices of max pooling")] if indices else y
    return emit


register(F.adaptive_avg_pool1d, torch.adaptive_avg_pool1d, "aten.adaptive_avg_pool1d")(
    _adaptive(1, "average"))
register(F.adaptive_avg_pool2d, "aten.adaptive_avg_pool2d", "aten._adaptive_avg_pool2d")(
    _adaptive(2, "average"))
register(F.adaptive_avg_pool3d, "aten.adaptive_avg_pool3d", "aten._adaptive_avg_pool3d")(
    _adaptive(3, "average"))
for _spatial in (1, 2, 3):
    register(getattr(F, f"adaptive_max_pool{_spatial}d"))(_adaptive(_spatial, "max"))
    # torch's and aten's forms return (values, indices).
    register(getattr(torch, f"adaptive_max_pool{_spatial}d", None),
             f"aten.adaptive_max_pool{_spatial}d")(_adaptive(_spatial, "max", indices=True))


@register_module(nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d)
def adaptive_avg_pool_module(ctx, module, name, input):
    return _adaptive_pool(ctx, input, module.output_size, _MODULE_SPATIAL[type(module)],
                          "average")


@register_module(nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d)
def adaptive_max_pool_module(ctx, module, name, input):
    if module.return_indices:
        raise ctx.unsupported("adaptive max pooling with return_indices=True")
    return _adaptive_pool(ctx, input, module.output_size, _MODULE_SPATIAL[type(module)],
                          "max")


__all__ = ["conv", "aten_convolution", "conv_module", "max_pool_module",
           "avg_pool_module", "adaptive_avg_pool_module", "adaptive_max_pool_module",
           "window_ops"]

"""Emitters of reductions (sum, mean, amax, amin, max, min, var, std, prod,
pairwise distances) and
normalisations (softmax, log_softmax, layer norm, RMS norm, batch norm in
inference)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Const, Unavailable
from .ir import LETTERS
from .ops_common import _check_dtype_arg, _dim, _dims, _is_tensor
from .ops_elementwise import _binary
from .ops_index import gather_at
from .ops_table import register, register_module


def _reduce(ctx, input, dim, keepdim, agg, mean=False, dtype=None):
    _check_dtype_arg(ctx, dtype)
    x = ctx.val(input)
    axes = _dims(dim, x.rank)
    if mean:
        return ctx.builder.mean(x, axes, keepdim)
    return ctx.builder.reduce(x, axes, keepdim, agg)


@register(torch.sum, ".sum", "aten.sum")
def sum_(ctx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(ctx, input, dim, keepdim, "add", dtype=dtype)


@register(torch.mean, ".mean", "aten.mean")
def mean(ctx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(ctx, input, dim, keepdim, "add", mean=True, dtype=dtype)


@register(torch.prod, ".prod", "aten.prod")
def prod(ctx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """prod.default (all elements) and prod.dim_int: a multiply reduction."""
    return _reduce(ctx, input, dim, keepdim, "mul", dtype=dtype)


@register(torch.amax, ".amax", "aten.amax")
def amax(ctx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(ctx, input, dim, keepdim, "max")


@register(torch.amin, ".amin", "aten.amin")
def amin(ctx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(ctx, input, dim, keepdim, "min")


def _extremum(ctx, agg, input, args, kwargs):
    """torch.max / torch.min: of the whole tensor, elementwise of two
    tensors, or along a dim: (values, indices), whose indices Doppler does
    not compute (using them is an error; amax / amin give the values)."""
    if not args and not kwargs:
        return _reduce(ctx, input, None, False, agg)
    if len(args) == 1 and _is_tensor(args[0]) and not kwargs:
        return _binary(ctx, agg, input, args[0])
    dim = args[0] if args else kwargs.get("dim")
    keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
    if dim is None or isinstance(dim, (list, tuple)) or _is_tensor(dim):
        raise ctx.unsupported(f"{agg} with arguments {args} {kwargs}")
    values = _reduce(ctx, input, dim, keepdim, agg)
    return [values, Unavailable(f"the indices of {agg} along a dim (use a{agg} for the "
                                "values)")]


@register(torch.max, ".max", "aten.max")
def max_(ctx, input, *args, **kwargs):
    return _extremum(ctx, "max", input, args, kwargs)


@register(torch.min, ".min", "aten.min")
def min_(ctx, input, *args, **kwargs):
    return _extremum(ctx, "min", input, args, kwargs)


def _var(ctx, input, dim, correction, keepdim):
    bld = ctx.builder
    x = ctx.val(input)
    axes = _dims(dim, x.rank)
    count = math.prod(x.shape[j] for j in axes)
    mu = bld.mean(x, axes, True)
    centred = bld.elementwise("sub", [x, mu], x.shape)
    ss = bld.reduce(centred, axes, keepdim, "add", join="square")
    if count - correction <= 0:
        raise ctx.unsupported("variance with no degrees of freedom")
    return bld.unary(ss, "scale", 1.0 / (count - correction))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@register(torch.var, ".var", "aten.var")
def var(ctx, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    return _var(ctx, input, dim, _correction(unbiased, correction), keepdim)


@register(torch.std, ".std", "aten.std")
def std(ctx, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return ctx.builder.unary(_var(ctx, input, dim, _correction(unbiased, correction), keepdim),
                             "sqrt")


def _softmax(ctx, input, dim, log=False):
    bld = ctx.builder
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    m = bld.reduce(x, [d], True, "max")
    s = bld.elementwise("sub", [x, m], x.shape)
    e = bld.unary(s, "exp")
    z = bld.reduce(e, [d], True, "add")
    if log:
        return bld.elementwise("sub", [s, bld.unary(z, "log")], x.shape)
    return bld.elementwise("div", [e, z], x.shape)


@register(torch.softmax, F.softmax, ".softmax", "aten.softmax")
def softmax(ctx, input, dim=None, _stacklevel=3, dtype=None):
    _check_dtype_arg(ctx, dtype)
    if dim is None:
        raise ctx.unsupported("softmax without dim")
    return _softmax(ctx, input, dim)


@register(torch.log_softmax, F.log_softmax, ".log_softmax", "aten.log_softmax")
def log_softmax(ctx, input, dim=None, _stacklevel=3, dtype=None):
    _check_dtype_arg(ctx, dtype)
    if dim is None:
        raise ctx.unsupported("log_softmax without dim")
    return _softmax(ctx, input, dim, log=True)


@register("aten._softmax")
def aten_softmax(ctx, input, dim, half_to_float):
    return _softmax(ctx, input, dim)


@register("aten._log_softmax")
def aten_log_softmax(ctx, input, dim, half_to_float):
    return _softmax(ctx, input, dim, log=True)


@register_module(nn.Softmax)
def softmax_module(ctx, module, name, input):
    return softmax(ctx, input, module.dim)


@register_module(nn.LogSoftmax)
def log_softmax_module(ctx, module, name, input):
    return log_softmax(ctx, input, module.dim)


def _layer_norm(ctx, input, normalized_shape, weight, bias, eps):
    bld = ctx.builder
    x = ctx.val(input)
    k = len(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else 1
    axes = list(range(x.rank - k, x.rank))
    count = math.prod(x.shape[j] for j in axes)
    mu = bld.mean(x, axes, True)
    centred = bld.elementwise("sub", [x, mu], x.shape)
    var = bld.unary(bld.reduce(centred, axes, True, "add", join="square"), "scale", 1.0 / count)
    inv = bld.unary(bld.unary(var, "shift", float(eps)), "rsqrt")
    y = bld.elementwise("mul", [centred, inv], x.shape)
    if weight is not None:
        y = bld.elementwise("mul", [y, ctx.val(weight)], x.shape)
    if bias is not None:
        y = bld.elementwise("add", [y, ctx.val(bias)], x.shape)
    return y


@register(F.layer_norm, torch.layer_norm, "aten.layer_norm")
def layer_norm(ctx, input, normalized_shape, weight=None, bias=None, eps=1e-5,
               cudnn_enable=True):
    return _layer_norm(ctx, input, normalized_shape, weight, bias, eps)


@register("aten.native_layer_norm")
def native_layer_norm(ctx, input, normalized_shape, weight, bias, eps):
    shape = ctx.shape if hasattr(ctx.node.meta.get("tensor_meta"), "shape") else \
        tuple(ctx.node.meta["tensor_meta"][0].shape)
    y = _layer_norm(ctx, input, normalized_shape, weight, bias, eps)
    assert tuple(y.shape) == shape
    return [y, Unavailable("the mean of native_layer_norm"),
            Unavailable("the rstd of native_layer_norm")]


@register_module(nn.LayerNorm)
def layer_norm_module(ctx, module, name, input):
    weight = ctx.param(name + ".weight") if module.weight is not None else None
    bias = ctx.param(name + ".bias") if module.bias is not None else None
    return _layer_norm(ctx, input, module.normalized_shape, weight, bias, module.eps)


def _rms_norm(ctx, input, normalized_shape, weight, eps):
    bld = ctx.builder
    x = ctx.val(input)
    k = len(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else 1
    axes = list(range(x.rank - k, x.rank))
    count = math.prod(x.shape[j] for j in axes)
    if eps is None:
        eps = torch.finfo(ctx.dtype).eps
    ms = bld.unary(bld.reduce(x, axes, True, "add", join="square"), "scale", 1.0 / count)
    inv = bld.unary(bld.unary(ms, "shift", float(eps)), "rsqrt")
    y = bld.elementwise("mul", [x, inv], x.shape)
    if weight is not None:
        y = bld.elementwise("mul", [y, ctx.val(weight)], x.shape)
    return y


@register(getattr(F, "rms_norm", None), "aten.rms_norm")
def rms_norm(ctx, input, normalized_shape, weight=None, eps=None):
    return _rms_norm(ctx, input, normalized_shape, weight, eps)


if hasattr(nn, "RMSNorm"):
    @register_module(nn.RMSNorm)
    def rms_norm_module(ctx, module, name, input):
        weight = ctx.param(name + ".weight") if module.weight is not None else None
        return _rms_norm(ctx, input, module.normalized_shape, weight, module.eps)


def _batch_norm(ctx, input, running_mean, running_var, weight, bias, training, eps):
    """Batch norm with running statistics (inference): per channel (dim 1),
    (x - mean) * rsqrt(var + eps) * weight + bias. Training mode (batch
    statistics, running ones updated) is refused: call module.eval(); a
    batch norm without running statistics is `_batch_statistics_norm`."""
    if training or running_mean is None or running_var is None:
        raise ctx.unsupported("batch norm with batch statistics (training mode, or "
                              "track_running_stats=False); call module.eval()")
    bld = ctx.builder
    x = ctx.val(input)
    if x.rank < 2:
        raise ctx.unsupported(f"batch norm of a rank-{x.rank} tensor (needs N, C, ...)")
    channel = [x.shape[1]] + [1] * (x.rank - 2)

    def per_channel(v, what):
        v = ctx.val(v, what)
        if tuple(v.shape) != (x.shape[1],):
            raise ctx.unsupported(f"batch norm {what} of shape {tuple(v.shape)} for "
                                  f"{x.shape[1]} channels")
        return bld.reshape(v, channel)

    inv = bld.unary(bld.unary(per_channel(running_var, "running_var"), "shift", float(eps)),
                    "rsqrt")
    y = bld.elementwise("sub", [x, per_channel(running_mean, "running_mean")], x.shape)
    y = bld.elementwise("mul", [y, inv], x.shape)
    if weight is not None:
        y = bld.elementwise("mul", [y, per_channel(weight, "weight")], x.shape)
    if bias is not None:
        y = bld.elementwise("add", [y, per_channel(bias, "bias")], x.shape)
    return y


def _batch_statistics_norm(ctx, input, weight, bias, eps):
    """Batch norm with the batch's own statistics (per channel, dim 1, over
    every other dim; the variance biased, as torch normalises with): aten's
    form of instance norm, and of batch norm without running statistics."""
    bld = ctx.builder
    x = ctx.val(input)
    if x.rank < 2:
        raise ctx.unsupported(f"batch norm of a rank-{x.rank} tensor (needs N, C, ...)")
    axes = [0] + list(range(2, x.rank))
    centered = bld.elementwise("sub", [x, bld.mean(x, axes, True)], x.shape)
    var = bld.mean(bld.unary(centered, "square"), axes, True)
    y = bld.elementwise("mul", [centered, bld.unary(bld.unary(var, "shift", float(eps)),
                                                    "rsqrt")], x.shape)
    channel = [x.shape[1]] + [1] * (x.rank - 2)
    if weight is not None:
        y = bld.elementwise("mul", [y, bld.reshape(ctx.val(weight), channel)], x.shape)
    if bias is not None:
        y = bld.elementwise("add", [y, bld.reshape(ctx.val(bias), channel)], x.shape)
    return y


@register(F.batch_norm)
def batch_norm_functional(ctx, input, running_mean, running_var, weight=None, bias=None,
                          training=False, momentum=0.1, eps=1e-5):
    return _batch_norm(ctx, input, running_mean, running_var, weight, bias, training, eps)


@register(torch.batch_norm, "aten.batch_norm")
def batch_norm(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    return _batch_norm(ctx, input, running_mean, running_var, weight, bias, training, eps)


@register("aten.native_batch_norm")
def native_batch_norm(ctx, input, weight, bias, running_mean, running_var, training,
                      momentum, eps):
    y = _batch_norm(ctx, input, running_mean, running_var, weight, bias, training, eps)
    return [y, Unavailable("the saved mean of native_batch_norm"),
            Unavailable("the saved inverse std of native_batch_norm")]


@register("aten._native_batch_norm_legit_no_training")
def native_batch_norm_no_training(ctx, input, weight, bias, running_mean, running_var,
                                  momentum, eps):
    y = _batch_norm(ctx, input, running_mean, running_var, weight, bias, False, eps)
    return [y, Unavailable("the saved mean of native_batch_norm"),
            Unavailable("the saved inverse std of native_batch_norm")]


@register("aten._native_batch_norm_legit", "aten._native_batch_norm_legit_functional")
def native_batch_norm_legit(ctx, input, weight, bias, *args):
    """torch 2's batch norm: (input, weight, bias, running_mean, running_var,
    training, momentum, eps), or without running statistics (no_stats:
    input, weight, bias, training, momentum, eps)."""
    if len(args) == 3:  # no_stats: the batch's statistics (instance norm's form)
        return [_batch_statistics_norm(ctx, input, weight, bias, args[2]),
                Unavailable("the saved mean of native_batch_norm"),
                Unavailable("the saved inverse std of native_batch_norm")]
    running_mean, running_var, training, momentum, eps = args
    y = _batch_norm(ctx, input, running_mean, running_var, weight, bias, training, eps)
    return [y, Unavailable("the saved mean of native_batch_norm"),
            Unavailable("the saved inverse std of native_batch_norm")]


@register_module(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
def batch_norm_module(ctx, module, name, input):
    tracked = module.track_running_stats and module.running_mean is not None
    mean = ctx.buffer(name + ".running_mean") if tracked else None
    var = ctx.buffer(name + ".running_var") if tracked else None
    weight = ctx.param(name + ".weight") if module.affine else None
    bias = ctx.param(name + ".bias") if module.affine else None
    return _batch_norm(ctx, input, mean, var, weight, bias, module.training, module.eps)


# -- pairwise distances ------------------------------------------------------------------


def _pairwise(ctx, x1, x2, p):
    """||x1[..., i, :] - x2[..., j, :]||_p for every i, j: the differences
    (one einsum, B x P x R x M), |.|^p summed over M, the 1/p-th power."""
    bld = ctx.builder
    a, b = ctx.val(x1), ctx.val(x2)
    if a.rank != b.rank or a.rank < 2 or a.shape[:-2] != b.shape[:-2] or \
            a.shape[-1] != b.shape[-1]:
        raise ctx.unsupported(f"cdist of shapes {a.shape} and {b.shape} (batch dims must "
                              "be equal)")
    p = float(p)
    batch = LETTERS[:a.rank - 2]
    i, j, m = LETTERS[a.rank - 2:a.rank + 1]
    shape = list(a.shape[:-1]) + [b.shape[-2], a.shape[-1]]
    diff = bld.einsum([(a, batch + i + m), (b, batch + j + m)], batch + i + j + m, shape, "sub")
    last = [len(shape) - 1]
    if p == 2.0:
        return bld.unary(bld.reduce(diff, last, False, "add", join="square"), "sqrt")
    if p == 1.0:
        return bld.reduce(diff, last, False, "add", join="abs")
    if math.isinf(p):
        return bld.reduce(diff, last, False, "max", join="abs")
    if p <= 0:
        raise ctx.unsupported(f"cdist with p={p} (counts of nonzero differences)")
    powered = bld.elementwise("pow", [bld.unary(diff, "abs"), bld.scalar(p)], shape)
    return bld.elementwise("pow", [bld.reduce(powered, last, False, "add"),
                                   bld.scalar(1.0 / p)], shape[:-1])


@register("aten._cdist_forward", torch.cdist)
def cdist(ctx, x1, x2, p=2.0, compute_mode=None):
    return _pairwise(ctx, x1, x2, p)


@register("aten._pdist_forward", F.pdist)
def pdist(ctx, input, p=2.0):
    """The distances of rows i < j, in torch's order: cdist of the rows
    with themselves, its upper triangle gathered."""
    x = ctx.val(input)
    n = x.shape[0]
    upper = torch.triu_indices(n, n, 1)
    positions = upper[0] * n + upper[1]
    return gather_at(ctx, _pairwise(ctx, x, x, p), 0, 2, positions, Const(ctx.node, positions))

"""Emitters of contractions: matmul and its variants (mm, bmm, addmm,
baddbmm), linear (with weights viewed for factored inputs and head splits)
and torch.einsum; each is one contraction einsum (+ a bias add)."""

import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .ir import LETTERS
from .ops_table import _aten_name, register, register_module


def _matmul(ctx, a, b, shape=None):
    a, b = ctx.val(a), ctx.val(b)
    shape = ctx.shape if shape is None else shape
    bld = ctx.builder
    if a.rank == 0 or b.rank == 0:
        raise ctx.unsupported("matmul of a 0-d tensor")
    a_batch = a.shape[:-2] if a.rank >= 2 else ()
    b_batch = b.shape[:-2] if b.rank >= 2 else ()
    nb = max(len(a_batch), len(b_batch))
    letters = iter(LETTERS)
    batch = [next(letters) for _ in range(nb)]
    n, k, m = next(letters), next(letters), next(letters)
    batch_shape = list(shape[:nb])

    def prepare(val, own_batch, tail):
        offset = nb - len(own_batch)
        val = bld.unitize(val, [j for j in range(len(own_batch))
                                if val.shape[j] == 1 and batch_shape[offset + j] != 1])
        return val, "".join(batch[offset:]) + tail

    a_op = prepare(a, a_batch, n + k if a.rank >= 2 else k)
    b_op = prepare(b, b_batch, k + m if b.rank >= 2 else k)
    out = "".join(batch) + (n if a.rank >= 2 else "") + (m if b.rank >= 2 else "")
    return bld.einsum([a_op, b_op], out, shape, "mul", agg="add")


@register(torch.matmul, operator.matmul, ".matmul", ".__matmul__", "aten.matmul")
def matmul(ctx, input, other, *, out=None):
    return _matmul(ctx, input, other)


@register(".__rmatmul__")
def rmatmul(ctx, input, other):
    return _matmul(ctx, other, input)


@register(torch.mm, ".mm", "aten.mm")
def mm(ctx, input, mat2, *, out=None):
    if ctx.val(input).rank != 2 or ctx.val(mat2).rank != 2:
        raise ctx.unsupported("mm needs 2-d tensors")
    return _matmul(ctx, input, _split_columns(ctx, ctx.val(mat2), ctx.shape))


@register(torch.bmm, ".bmm", "aten.bmm")
def bmm(ctx, input, mat2, *, out=None):
    if ctx.val(input).rank != 3 or ctx.val(mat2).rank != 3:
        raise ctx.unsupported("bmm needs 3-d tensors")
    return _matmul(ctx, input, mat2)


def _add_scaled(ctx, product, bias, beta, alpha):
    bld = ctx.builder
    if alpha != 1:
        product = bld.unary(product, "scale", float(alpha))
    if beta == 0:
        return product
    bias = ctx.val(bias)
    if beta != 1:
        bias = bld.unary(bias, "scale", float(beta))
    return bld.elementwise("add", [product, bias], ctx.shape)


@register(torch.addmm, ".addmm", "aten.addmm")
def addmm(ctx, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    mat2 = _split_columns(ctx, ctx.val(mat2), ctx.shape)
    return _add_scaled(ctx, _matmul(ctx, mat1, mat2), input, beta, alpha)


@register(torch.baddbmm, ".baddbmm", "aten.baddbmm")
def baddbmm(ctx, input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return _add_scaled(ctx, _matmul(ctx, batch1, batch2), input, beta, alpha)


def _linear(ctx, input, weight, bias, shape):
    """x W^T + b as one contraction (and a bias add).

    Reshapes around a linear are free where the weight is an argument: an
    input whose last dim is factored (heads merged by a view) contracts
    member by member against the weight viewed as [out, h, e]; and when the
    only user is a view splitting the output features (heads), the weight
    is viewed as [h, e, in] (and the bias as [h, e]) so that the result is
    produced factored and the view costs nothing.
    """
    bld = ctx.builder
    x, w = ctx.val(input), ctx.val(weight)
    b = ctx.val(bias) if bias is not None else None
    if w.rank != 2:
        raise ctx.unsupported("linear with a weight that is not 2-d")
    out_f, in_f = w.shape
    letters = iter(LETTERS)
    lead = "".join(next(letters) for _ in range(x.rank - 1))
    in_ext = [in_f]
    if isinstance(x.dims[-1], tuple):
        members = [x.phys[p] for p in x.dims[-1]]
        if ctx.reshaped_argument(w, [out_f] + members) is not None:
            in_ext = members
            x = x.with_dims(x.dims[:-1] + list(x.dims[-1]))
    out_ext = _output_split(ctx, shape, out_f)
    if out_ext and (ctx.reshaped_argument(w, out_ext + [in_f]) is None or
                    (b is not None and ctx.reshaped_argument(b, out_ext) is None)):
        out_ext = None
    out_ext = out_ext or [out_f]
    ins = "".join(next(letters) for _ in in_ext)
    outs = "".join(next(letters) for _ in out_ext)
    if len(in_ext) > 1 or len(out_ext) > 1:
        w = ctx.reshaped_argument(w, out_ext + in_ext)
        if b is not None and len(out_ext) > 1:
            b = ctx.reshaped_argument(b, out_ext)
    if len(in_ext) == 1:
        x = ctx.builder.defactor(x)
    y_shape = tuple(shape[:-1]) + tuple(out_ext)
    y = bld.einsum([(x, lead + ins), (w, outs + ins)], lead + outs, y_shape, "mul", agg="add")
    if b is not None:
        y = bld.elementwise("add", [y, b], y_shape)
    if len(out_ext) > 1:
        y = y.with_dims(y.dims[:-len(out_ext)] + [tuple(y.dims[-len(out_ext):])])
    return y


_VIEWS = {"view", "reshape", "aten.view", "aten.reshape", "aten._unsafe_view"}


def _output_split(ctx, shape, out_f):
    """The extents into which a chain of views, each the only user of the
    one before (starting with the current node's only user), splits the
    last dim of the current result (keeping the leading extents' product),
    or None."""
    lead = math.prod(shape[:-1])
    node = ctx.node
    while len(node.users) == 1:
        user = next(iter(node.users))
        name = user.target if user.op == "call_method" else \
            ("reshape" if user.target is torch.reshape else _aten_name(user.target))
        if user.op not in ("call_method", "call_function") or name not in _VIEWS:
            return None
        meta = user.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            return None
        target = [int(e) for e in meta.shape]
        k, product = 0, 1
        while k < len(target) and product < lead:
            product *= target[k]
            k += 1
        tail = [e for e in target[k:] if e != 1]
        if product == lead and len(tail) >= 2 and math.prod(tail) == out_f:
            return tail
        node = user
    return None


def _split_columns(ctx, b, shape):
    """`b` (the right operand of a 2-d product, an argument or a view of
    one) with its columns split as the views after the product split them
    (heads), so that the product comes out factored and the views are free;
    `b` itself otherwise."""
    if b.rank != 2 or not isinstance(b.dims[1], int):
        return b
    tail = _output_split(ctx, shape, b.shape[1])
    if not tail:
        return b
    return ctx.split_argument(b, b.dims[1], tail) or b


@register(F.linear, "aten.linear")
def linear(ctx, input, weight, bias=None):
    return _linear(ctx, input, weight, bias, ctx.shape)


@register_module(nn.Linear)
def linear_module(ctx, module, name, input):
    weight = ctx.param(name + ".weight")
    bias = ctx.param(name + ".bias") if module.bias is not None else None
    return _linear(ctx, input, weight, bias, ctx.shape)


@register(torch.einsum, "aten.einsum")
def einsum(ctx, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    vals = [ctx.val(o) for o in operands]
    if len(vals) not in (1, 2):
        raise ctx.unsupported("torch.einsum with more than two operands")
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise ctx.unsupported("torch.einsum with '...'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
    mapping = {}
    for t in terms + [rhs]:
        if len(set(t)) != len(t):
            raise ctx.unsupported(f"torch.einsum '{equation}' repeats an index in a term")
        for c in t:
            mapping.setdefault(c, LETTERS[len(mapping)])
    bld = ctx.builder
    operands = []
    for val, t in zip(vals, terms):
        letters = "".join(mapping[c] for c in t)
        out_extent = dict(zip(rhs, ctx.shape))
        val = bld.unitize(val, [j for j, c in enumerate(t)
                                if val.shape[j] == 1 and out_extent.get(c, 1) != 1])
        operands.append((val, letters))
    join = "mul" if len(vals) == 2 else "identity"
    return bld.einsum(operands, "".join(mapping[c] for c in rhs), ctx.shape, join, agg="add")

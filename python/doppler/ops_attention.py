"""Emitters of masks (masked_fill, where with folded conditions; comparisons
are refused), the embedding (a doppler.gather) and
scaled_dot_product_attention."""

import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Const, Unavailable
from .ir import LETTERS
from .ops_common import _is_number
from .ops_activations import safe_softmax
from .ops_layout import transpose
from .ops_linalg import _matmul
from .ops_reduce import _softmax
from .ops_table import register, register_module


def _mask_tensors(ctx, cond):
    """The float keep/fill masks of a folded bool condition."""
    if not isinstance(cond, Const) or not isinstance(cond.value, torch.Tensor):
        raise ctx.unsupported(
            "a mask computed from inputs or parameters: Doppler has no select; the "
            "condition must depend only on buffers and constants (it is then passed as an "
            "argument)")
    return cond.value.to(torch.bool)


def _where(ctx, cond, a, b):
    """torch.where(cond, a, b) for a host-computed `cond`.

    A branch known on the host (a number, or a value folded or computed by
    torch, such as aten's scalar_tensor(-inf)) becomes an argument: its
    values where selected, 0 elsewhere, added to the other branch. A
    computed branch is multiplied by its 0/1 mask, except where the other
    branch is infinite wherever it is selected (x + (-inf where masked) is
    exact for finite x; x * 0 would not be needed). A computed branch must
    be finite where it is not selected (inf * 0 is nan).
    """
    mask = _mask_tensors(ctx, cond)
    bld, shape = ctx.builder, ctx.shape
    base = cond.node.name

    def known(value):
        if _is_number(value):
            return torch.tensor(float(value), dtype=ctx.dtype), str(value)
        if isinstance(value, Const) and isinstance(value.value, torch.Tensor):
            return value.value.to(ctx.dtype), value.node.name
        return None

    branches = [(a, known(a), mask, "t"), (b, known(b), ~mask, "f")]
    if branches[0][1] is not None and branches[1][1] is not None:
        both = torch.where(mask, branches[0][1][0], branches[1][1][0])
        return bld.elementwise("add", [ctx.constant(cond, both, f"{base}.where")], shape)
    parts = []
    for (value, host, selected, tag), (_, other, other_selected, _) in zip(
            branches, reversed(branches)):
        if host is not None:
            tensor, label = host
            selected_b, tensor_b = torch.broadcast_tensors(selected, tensor)
            fill = torch.where(selected_b, tensor_b, torch.zeros((), dtype=ctx.dtype))
            parts.append(ctx.constant(cond, fill, f"{base}.fill_{tag}_{label}"))
            continue
        x = ctx.val(value)
        if other is not None:
            where_other, other_b = torch.broadcast_tensors(other_selected, other[0])
            if bool(torch.isinf(other_b[where_other]).all()):
                parts.append(x)  # beside an infinite fill
                continue
        parts.append(bld.elementwise("mul", [x, ctx.constant(cond, selected.to(ctx.dtype),
                                                             f"{base}.keep_{tag}")], shape))
    return bld.elementwise("add", parts, shape)


@register(torch.where, "aten.where")
def where(ctx, condition, input=None, other=None):
    if input is None:
        raise ctx.unsupported("torch.where(condition) (indices) is not supported")
    return _where(ctx, condition, input, other)


@register(".masked_fill", torch.masked_fill, "aten.masked_fill")
def masked_fill(ctx, input, mask, value):
    if isinstance(value, Const):
        if value.inputs:
            return _where(ctx, mask, value, input)  # an argument, not a baked number
        value = value.value
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise ctx.unsupported("masked_fill with a tensor value")
        value = value.item()
    if not _is_number(value):
        raise ctx.unsupported("masked_fill with a non-constant value")
    return _where(ctx, mask, value, input)


def _comparison(ctx, *args, **kwargs):
    raise ctx.unsupported(
        "a comparison of computed tensors: it gives a bool tensor, which Doppler programs do "
        "not hold; a mask (masked_fill, where) must depend only on buffers and constants "
        "(it is then computed by torch and passed as an argument)")


register(torch.gt, torch.lt, torch.ge, torch.le, torch.eq, torch.ne, operator.gt, operator.lt,
         operator.ge, operator.le, operator.eq, operator.ne, operator.invert, torch.logical_not,
         operator.and_, operator.or_, ".gt", ".lt", ".ge", ".le", ".eq", ".ne", ".__gt__",
         ".__lt__", ".__ge__", ".__le__", ".__eq__", ".__ne__", ".__invert__",
         ".logical_not", ".bool", "aten.gt", "aten.lt", "aten.ge", "aten.le", "aten.eq",
         "aten.ne", "aten.logical_not", "aten.bitwise_not")(_comparison)


# -- embedding -----------------------------------------------------------------------


def _embedding(ctx, ids, weight, padding_idx=None, max_norm=None):
    """doppler.gather of the weight's rows at the ids. The ids are computed by
    torch (from integer inputs of forward, buffers and literals): an i32/i64
    argument, a derived input when they depend on an input. padding_idx only
    changes the gradient: forward is the plain gather."""
    if max_norm is not None:
        raise ctx.unsupported("embedding with max_norm (it renormalises the weight)")
    w = ctx.val(weight)
    if w.rank != 2:
        raise ctx.unsupported("embedding with a weight that is not 2-d")
    if not (isinstance(ids, Const) and isinstance(ids.value, torch.Tensor)
            and not ids.value.dtype.is_floating_point):
        raise ctx.unsupported(
            "embedding indices must be computed from integer inputs of forward, buffers and "
            "constants only (they become integer arguments); these are computed from float "
            "data")
    value = ids.value
    index_type = "i32" if value.dtype == torch.int32 else "i64"
    indices = ctx.constant(ids, value if value.dtype in (torch.int32, torch.int64)
                           else value.long(), f"{ids.node.name}.ids", index=True)
    return ctx.builder.gather(w, indices, index_type, axis=0)


@register(F.embedding)
def embedding(ctx, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    return _embedding(ctx, input, weight, padding_idx, max_norm)


@register("aten.embedding")
def aten_embedding(ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
                   sparse=False):
    return _embedding(ctx, indices, weight)


@register_module(nn.Embedding)
def embedding_module(ctx, module, name, input):
    return _embedding(ctx, input, ctx.param(name + ".weight"), module.padding_idx,
                      module.max_norm)


# -- attention -------------------------------------------------------------------------


def _grouped_mask_shape(ctx, shape, kv_heads, group):
    """A mask's shape (..., heads or 1, L, S) with enable_gqa's heads split
    as the query's are, (..., kv_heads, group, L, S) or (..., 1, 1, L, S)."""
    if len(shape) < 3:
        return shape
    heads = shape[-3]
    if heads == 1:
        return shape[:-3] + (1, 1) + shape[-2:]
    if heads == kv_heads * group:
        return shape[:-3] + (kv_heads, group) + shape[-2:]
    raise ctx.unsupported(f"an attention mask with {heads} heads for {kv_heads * group} "
                          "query heads")


def _sdpa(ctx, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False, _shape=None):
    """softmax(q k^T * scale + mask) v as torch 2 computes it: a row that
    the mask leaves nothing to attend to gives 0 (torch's safe softmax),
    not nan. enable_gqa: key and value have H_kv heads (dim -3) for the
    query's H = G H_kv; query head h reads kv head h // G."""
    if dropout_p:
        raise ctx.unsupported("scaled_dot_product_attention with dropout_p > 0")
    bld = ctx.builder
    q, k, v = ctx.val(query), ctx.val(key), ctx.val(value)
    out_shape = ctx.shape if _shape is None else _shape
    if enable_gqa and q.rank >= 3 and q.shape[-3] != k.shape[-3]:
        heads, kv_heads = q.shape[-3], k.shape[-3]
        if kv_heads != v.shape[-3] or heads % kv_heads:
            raise ctx.unsupported(f"enable_gqa with {heads} query heads and "
                                  f"{k.shape[-3]}/{v.shape[-3]} key/value heads")
        # Query heads in groups of G per kv head, a new dim beside it; the
        # kv tensors broadcast along it.
        group = heads // kv_heads
        q = bld.reshape(q, q.shape[:-3] + (kv_heads, group) + q.shape[-2:])
        k = bld.reshape(k, k.shape[:-2] + (1,) + k.shape[-2:])
        v = bld.reshape(v, v.shape[:-2] + (1,) + v.shape[-2:])
    else:
        group = None
    length, source, e = q.shape[-2], k.shape[-2], q.shape[-1]
    batch = [max(a, b) for a, b in zip(q.shape[:-2], k.shape[:-2])]
    s_shape = tuple(batch) + (length, source)
    kt = transpose(ctx, k, -2, -1)
    scores = _matmul(ctx, q, kt, s_shape)
    factor = scale if scale is not None else 1.0 / math.sqrt(e)
    scores = bld.unary(scores, "scale", float(factor))
    if is_causal:
        keep = torch.ones(length, source, dtype=torch.bool).tril(diagonal=0)
        add = torch.zeros(length, source, dtype=ctx.dtype).masked_fill(~keep, float("-inf"))
        mask = ctx.argument(("causal", ctx.node.name), f"{ctx.node.name}.causal_mask",
                            "constant", (2, ctx.node.name), add,
                            f"causal mask of '{ctx.node.name}'")
        scores = bld.elementwise("add", [scores, mask], s_shape)
    if attn_mask is not None:
        if isinstance(attn_mask, Const) and attn_mask.value.dtype == torch.bool:
            add = torch.zeros(attn_mask.value.shape, dtype=ctx.dtype).masked_fill(
                ~attn_mask.value, float("-inf"))
            if group is not None:
                add = add.reshape(_grouped_mask_shape(ctx, tuple(add.shape), kv_heads, group))
            mask = ctx.constant(attn_mask, add, f"{attn_mask.node.name}.additive")
        else:
            mask = ctx.val(attn_mask)
            if group is not None:
                mask = bld.reshape(mask, _grouped_mask_shape(ctx, mask.shape, kv_heads, group))
        scores = bld.elementwise("add", [scores, mask], s_shape)
    if attn_mask is None and not is_causal:
        p = _softmax(ctx, scores, -1)
    else:
        p = safe_softmax(ctx, scores, -1)
    out = _matmul(ctx, p, v, tuple(batch) + (length, v.shape[-1]))
    return out if out.shape == tuple(out_shape) else bld.reshape(out, tuple(out_shape))


register(getattr(F, "scaled_dot_product_attention", None), "aten.scaled_dot_product_attention")(
    _sdpa)



@register_module(nn.MultiheadAttention)
def multihead_attention_module(ctx, module, name, query, key, value, key_padding_mask=None,
                               need_weights=True, attn_mask=None, average_attn_weights=True,
                               is_causal=False):
    """nn.MultiheadAttention as a leaf module of symbolic_trace (torch 1.x):
    the packed input projection viewed as [3, heads, head_dim, embed] (one
    einsum per q, k, v, heads split for free), scaled dot-product attention,
    and the output projection viewed as [embed, heads, head_dim]. The
    attention weights are not computed."""
    if key_padding_mask is not None or module.bias_k is not None or module.add_zero_attn \
            or not module._qkv_same_embed_dim or (module.training and module.dropout > 0):
        raise ctx.unsupported("nn.MultiheadAttention with key_padding_mask, bias_k/bias_v, "
                              "add_zero_attn, separate k/v dims or dropout in training")
    bld = ctx.builder
    e, h = module.embed_dim, module.num_heads
    d = e // h
    q, k, v = (ctx.val(t) for t in (query, key, value))
    if not module.batch_first:  # (L, N, E) -> (N, L, E): a free view
        q, k, v = (transpose(ctx, t, 0, 1) if t.rank == 3 else t for t in (q, k, v))
    w = ctx.reshaped_argument(ctx.param(name + ".in_proj_weight"), [3, h, d, e])
    b = ctx.reshaped_argument(ctx.param(name + ".in_proj_bias"), [3, h, d]) \
        if module.in_proj_bias is not None else None
    lead = LETTERS[:q.rank - 1]
    s_, hl, dl, el = LETTERS[q.rank - 1:q.rank + 3]
    heads = []
    for i, x in enumerate((q, k, v)):
        shape = tuple(x.shape[:-1]) + (h, d)
        y = bld.einsum([(x, lead + el), (bld.slice(w, 0, i, 1), s_ + hl + dl + el)],
                       lead + hl + dl, shape, "mul", agg="add")
        if b is not None:
            y = bld.einsum([(y, lead + hl + dl), (bld.slice(b, 0, i, 1), s_ + hl + dl)],
                           lead + hl + dl, shape, "add", agg="add")
        heads.append(transpose(ctx, y, -3, -2))  # (..., H, L, D)
    mask = attn_mask
    if mask is not None and isinstance(mask, Const) and mask.value.dtype == torch.bool:
        add = torch.zeros(mask.value.shape, dtype=ctx.dtype).masked_fill(mask.value,
                                                                         float("-inf"))
        mask = ctx.constant(mask, add, f"{mask.node.name}.additive")  # True: masked out
    length, source = heads[0].shape[-2], heads[1].shape[-2]
    out_shape = tuple(heads[0].shape[:-2]) + (length, d)
    o = _sdpa(ctx, heads[0], heads[1], heads[2], mask, is_causal=is_causal, _shape=out_shape)
    o = transpose(ctx, o, -3, -2)  # (..., L, H, D)
    wo = ctx.reshaped_argument(ctx.param(name + ".out_proj.weight"), [e, h, d])
    y_shape = tuple(o.shape[:-2]) + (e,)
    y = bld.einsum([(o, lead + hl + dl), (wo, el + hl + dl)], lead + el, y_shape, "mul",
                   agg="add")
    if module.out_proj.bias is not None:
        y = bld.elementwise("add", [y, ctx.param(name + ".out_proj.bias")], y_shape)
    if not module.batch_first and y.rank == 3:
        y = transpose(ctx, y, 0, 1)
    return [y, Unavailable("the attention weights of nn.MultiheadAttention (pass "
                           "need_weights=False)") if need_weights else None]

"""Emitters of layout ops: no-ops and dtype checks, views (free: transpose,
permute, unsqueeze, expand...), reshapes, joining (cat, stack, repeat) and
slicing (getitem, select, narrow, split, chunk, unbind, squeeze)."""

import builtins
import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Const, Unavailable
from .ir import Bcast, is_phys
from .ops_common import _dim, _dims, _is_tensor
from .ops_conv import _blocked, _residue
from .ops_index import aten_index, gather_at
from .ops_table import register, register_module


# -- no-ops, dtype and dropout -------------------------------------------------


@register(".contiguous", ".clone", ".detach", torch.clone, torch.detach, "aten.clone",
          "aten.detach", "aten.alias", "aten.contiguous", "aten.lift_fresh_copy")
def identity(ctx, input, *args, **kwargs):
    return ctx.val(input)



@register_module(nn.Identity)
def identity_module(ctx, module, name, input, *args, **kwargs):
    return ctx.val(input)



def _dropout(ctx, input, p, training):
    if training and p > 0:
        raise ctx.unsupported("dropout in training mode (random); call module.eval()")
    return ctx.val(input)


@register(F.dropout, "aten.dropout")
def dropout(ctx, input, p=0.5, training=True, inplace=False, train=None):
    if train is not None:
        training = train
    return _dropout(ctx, input, p, training)


@register("aten.native_dropout")
def native_dropout(ctx, input, p, train):
    x = _dropout(ctx, input, p, train is not False)
    return [x, Unavailable("the mask of dropout")]


@register_module(nn.Dropout)
def dropout_module(ctx, module, name, input):
    return _dropout(ctx, input, module.p, module.training)



def _same_dtype(ctx, dtype):
    if isinstance(dtype, torch.dtype) and dtype != ctx.dtype:
        what = "" if dtype.is_floating_point else (
            ": integer and bool arithmetic on computed data is not supported (only on "
            "integer inputs and constants, which torch computes on the host)")
        raise ctx.unsupported(f"conversion to {dtype} (the program is {ctx.dtype}){what}")


@register(".to", ".type", "aten.to")
def to(ctx, input, *args, **kwargs):
    for a in list(args) + list(kwargs.values()):
        _same_dtype(ctx, a)
    return ctx.val(input)


def _register_cast(method, dtype):
    """Tensor.float(), .double(), ...: a no-op on a tensor of `dtype` (the
    program has one element type), an error otherwise."""
    @register(method)
    def cast(ctx, input, *args, **kwargs):
        _same_dtype(ctx, dtype)
        return ctx.val(input)
    cast.__name__ = "to_" + method.lstrip(".")
    return cast


for _method, _dtype in ((".float", torch.float32), (".double", torch.float64),
                        (".half", torch.float16), (".long", torch.int64),
                        (".int", torch.int32)):
    _register_cast(_method, _dtype)


@register(".type_as")
def type_as(ctx, input, other):
    return ctx.val(input)


@register("aten._to_copy")
def to_copy(ctx, input, *, dtype=None, **kwargs):
    _same_dtype(ctx, dtype)
    return ctx.val(input)



# -- views and shapes -------------------------------------------------------------


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple, torch.Size)):
        return list(args[0])
    return list(args)


def _resolve_shape(ctx, x, shape):
    shape = [int(s) for s in shape]
    total = math.prod(x.shape)
    if shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = total // known if known else 0
    return shape


@register(".view", ".reshape", torch.reshape, "aten.view", "aten.reshape", "aten._unsafe_view")
def view(ctx, input, *shape):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise ctx.unsupported("view as another dtype")
    x = ctx.val(input)
    return ctx.builder.reshape(x, _resolve_shape(ctx, x, _shape_args(shape)))


def _strided_as_reshape(ctx, shape, size, stride, offset=0):
    """Whether reading the current node's input (logical `shape`, with the
    strides and storage offset it had on the example inputs) as
    `as_strided(size, stride, offset)` gives its elements in row-major
    order: then the op is a reshape. Worked out on a map of the storage."""
    layout = ctx.layout(ctx.node.args[0])
    if layout is None:
        return False
    in_stride, in_offset = layout
    numel = math.prod(shape)
    if numel != math.prod(size):
        return False
    reach = max(in_offset, offset) + 1 + sum((e - 1) * abs(s) for e, s in zip(shape, in_stride)) \
        + sum((e - 1) * abs(int(s)) for e, s in zip(size, stride))
    storage = torch.full((reach,), -1, dtype=torch.long)
    try:
        storage.as_strided(tuple(shape), in_stride, in_offset).copy_(
            torch.arange(numel).reshape(shape))
        read = storage.as_strided(tuple(size), tuple(int(s) for s in stride), int(offset))
    except RuntimeError:
        return False
    return torch.equal(read.reshape(-1), torch.arange(numel))


@register("aten._reshape_alias")
def reshape_alias(ctx, input, size, stride):
    """make_fx's decomposition of a reshape that is a view (of a transposed
    input too): a reshape when the strides read the input in row-major order."""
    x = ctx.val(input)
    size = [int(e) for e in size]
    # A view: it keeps its input's storage offset (a slice of a fused
    # projection, GPT-2's key, starts past 0).
    layout = ctx.layout(ctx.node.args[0])
    offset = layout[1] if layout else 0
    if not _strided_as_reshape(ctx, x.shape, size, stride, offset):
        raise ctx.unsupported(f"_reshape_alias to {tuple(size)} with strides "
                              f"{tuple(int(s) for s in stride)} (not a reshape of its input)")
    return ctx.builder.reshape(x, size)


@register("aten.as_strided")
def as_strided(ctx, input, size, stride, storage_offset=None):
    """A reshape when it reads the input's elements in row-major order (the
    decompositions write some views so, e.g. a pooled [N, C, 1, 1]); other
    strides of a contiguous input (overlapping windows, diagonals): a gather
    at the positions torch's as_strided reads."""
    x = ctx.val(input)
    size = [int(e) for e in size]
    offset = ctx.layout(ctx.node.args[0])[1] if storage_offset is None and \
        ctx.layout(ctx.node.args[0]) else int(storage_offset or 0)
    if _strided_as_reshape(ctx, x.shape, size, stride, offset):
        return ctx.builder.reshape(x, size)
    layout = ctx.layout(ctx.node.args[0])
    if layout is None or tuple(layout[0]) != _contiguous_strides(x.shape):
        raise ctx.unsupported(f"as_strided to {tuple(size)} with strides "
                              f"{tuple(int(s) for s in stride)} of a tensor that is not "
                              "contiguous in memory")
    storage = math.prod(x.shape)
    try:  # the positions it reads, from torch's own as_strided of an arange
        positions = torch.arange(storage + layout[1]).as_strided(
            size, [int(s) for s in stride], offset) - layout[1]
    except RuntimeError as e:
        raise ctx.unsupported(f"as_strided to {tuple(size)} out of its input: {e}") from None
    if positions.numel() and (int(positions.min()) < 0 or int(positions.max()) >= storage):
        raise ctx.unsupported(f"as_strided to {tuple(size)} reads outside its input")
    return gather_at(ctx, x, 0, x.rank, positions, Const(ctx.node, positions))


def _contiguous_strides(shape):
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= max(int(e), 1)
    return tuple(reversed(strides))


@register(".view_as", ".reshape_as")
def view_as(ctx, input, other):
    return ctx.builder.reshape(ctx.val(input), ctx.shape)


@register(torch.flatten, ".flatten", "aten.flatten")
def flatten(ctx, input, start_dim=0, end_dim=-1):
    return ctx.builder.reshape(ctx.val(input), ctx.shape)


@register(".unflatten", torch.unflatten if hasattr(torch, "unflatten") else None,
          "aten.unflatten")
def unflatten(ctx, input, dim, sizes):
    return ctx.builder.reshape(ctx.val(input), ctx.shape)


@register_module(nn.Flatten, nn.Unflatten)
def flatten_module(ctx, module, name, input):
    return ctx.builder.reshape(ctx.val(input), ctx.shape)


@register(torch.unsqueeze, ".unsqueeze", "aten.unsqueeze")
def unsqueeze(ctx, input, dim):
    x = ctx.val(input)
    d = _dim(dim, x.rank + 1)
    return x.with_dims(x.dims[:d] + [Bcast(1)] + x.dims[d:])


@register(torch.squeeze, ".squeeze", "aten.squeeze")
def squeeze(ctx, input, dim=None):
    x = ctx.val(input)
    if dim is None:
        axes = [j for j, e in enumerate(x.shape) if e == 1]
    else:
        axes = [j for j in _dims(dim, x.rank) if x.shape[j] == 1]
    return ctx.builder.drop_dims(x, axes)


@register(torch.transpose, torch.swapaxes, ".transpose", ".swapaxes", "aten.transpose")
def transpose(ctx, input, dim0, dim1):
    x = ctx.val(input)
    a, b = _dim(dim0, x.rank), _dim(dim1, x.rank)
    dims = list(x.dims)
    dims[a], dims[b] = dims[b], dims[a]
    return x.with_dims(dims)


@register(torch.t, ".t", "aten.t")
def t(ctx, input):
    x = ctx.val(input)
    if x.rank < 2:
        return x
    return transpose(ctx, x, 0, 1)


@register(torch.permute, ".permute", "aten.permute")
def permute(ctx, input, *dims):
    x = ctx.val(input)
    order = [_dim(d, x.rank) for d in _shape_args(dims)]
    return x.with_dims([x.dims[d] for d in order])


@register(torch.movedim, ".movedim", "aten.movedim")
def movedim(ctx, input, source, destination):
    x = ctx.val(input)
    src = source if isinstance(source, (list, tuple)) else [source]
    dst = destination if isinstance(destination, (list, tuple)) else [destination]
    src = [_dim(s, x.rank) for s in src]
    dst = [_dim(d, x.rank) for d in dst]
    order = [None] * x.rank
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(j for j in range(x.rank) if j not in src)
    order = [o if o is not None else next(rest) for o in order]
    return x.with_dims([x.dims[j] for j in order])


def _expand_to(ctx, x, shape):
    x = ctx.val(x)
    shape = [int(e) for e in shape]
    lead = len(shape) - x.rank
    if lead < 0:
        raise ctx.unsupported("expand to fewer dimensions")
    for j in range(x.rank):
        if shape[lead + j] != x.shape[j] and x.shape[j] != 1:
            raise ctx.unsupported(f"expand of extent {x.shape[j]} to {shape[lead + j]}")
    x = ctx.builder.unitize(x, [j for j in range(x.rank) if shape[lead + j] != x.shape[j]])
    dims = [Bcast(e) for e in shape[:lead]]
    for j, d in enumerate(x.dims):
        dims.append(d if is_phys(d) else Bcast(shape[lead + j]))
    return x.with_dims(dims)


@register(".expand", "aten.expand", torch.broadcast_to, ".broadcast_to")
def expand(ctx, input, *sizes, implicit=False):
    return _expand_to(ctx, input, ctx.shape)


@register(".expand_as")
def expand_as(ctx, input, other):
    return _expand_to(ctx, input, ctx.shape)



# -- joining and slicing -------------------------------------------------------


@register(".repeat", "aten.repeat")
def repeat(ctx, input, *repeats):
    reps = _shape_args(repeats)
    x = ctx.val(input)
    lead = len(reps) - x.rank
    x = x.with_dims([Bcast(1)] * lead + x.dims)
    bld = ctx.builder
    for j, r in enumerate(reps):
        if r == 1:
            continue
        if not is_phys(x.dims[j]):
            if x.shape[j] == 1:
                dims = list(x.dims)
                dims[j] = Bcast(r)
                x = x.with_dims(dims)
                continue
            x = bld.make_physical(x, [j])
        x = bld.tile(x, j, r)
    return x


@register(torch.cat, torch.concat, "aten.cat", "aten.concat")
def cat(ctx, tensors, dim=0, *, out=None):
    vals = [ctx.val(t) for t in tensors]
    vals = [v for v in vals if not (v.rank == 1 and v.shape[0] == 0)]
    d = _dim(dim, vals[0].rank)
    return ctx.builder.concat(vals, d)


@register(torch.stack, "aten.stack")
def stack(ctx, tensors, dim=0, *, out=None):
    vals = [ctx.val(t) for t in tensors]
    d = _dim(dim, vals[0].rank + 1)
    vals = [v.with_dims(v.dims[:d] + [Bcast(1)] + v.dims[d:]) for v in vals]
    vals = [ctx.builder.make_physical(v, [d]) for v in vals]
    return ctx.builder.concat(vals, d)


def _split_sizes(total, split_size_or_sections):
    if isinstance(split_size_or_sections, (list, tuple)):
        return list(split_size_or_sections)
    size = int(split_size_or_sections)
    sizes = [size] * (total // size)
    if total % size:
        sizes.append(total % size)
    return sizes


def _split(ctx, x, sizes, dim):
    x = ctx.val(x)
    d = _dim(dim, x.rank)
    out, start = [], 0
    for s in sizes:
        out.append(ctx.builder.slice(x, d, start, s))
        start += s
    return out


@register(torch.split, ".split", "aten.split", "aten.split_with_sizes", "aten.unsafe_split",
          "aten.unsafe_split_with_sizes")
def split(ctx, tensor, split_size_or_sections, dim=0):
    x = ctx.val(tensor)
    return _split(ctx, x, _split_sizes(x.shape[_dim(dim, x.rank)], split_size_or_sections), dim)


@register(torch.chunk, ".chunk", "aten.chunk")
def chunk(ctx, input, chunks, dim=0):
    x = ctx.val(input)
    total = x.shape[_dim(dim, x.rank)]
    size = -(-total // chunks)
    return _split(ctx, x, _split_sizes(total, size), dim)


@register(torch.unbind, ".unbind", "aten.unbind")
def unbind(ctx, input, dim=0):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    return [ctx.builder.drop_dim(ctx.builder.slice(x, d, i, 1), d) for i in range(x.shape[d])]


@register(torch.narrow, ".narrow", "aten.narrow")
def narrow(ctx, input, dim, start, length):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    return ctx.builder.slice(x, d, start % x.shape[d] if start < 0 else start, length)


@register(torch.select, ".select", "aten.select")
def select(ctx, input, dim, index):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    i = index + x.shape[d] if index < 0 else index
    return ctx.builder.drop_dim(ctx.builder.slice(x, d, i, 1), d)


def strided_slice(ctx, x, d, begin, stop, stride):
    """Elements begin, begin + stride, ... below stop of logical dim `d`: a
    slice; with a step, the range viewed as (blocks, stride) (padded at its
    end, never read) and the first of each block taken (a slice and
    reshapes, not a slice per element)."""
    if stride < 1:
        raise ctx.unsupported(f"slicing with step {stride} (torch requires a positive step)")
    bld = ctx.builder
    count = len(range(begin, stop, stride))
    x = bld.slice(x, d, begin, max(stop - begin, 0))
    if stride == 1 or count <= 1:
        return bld.slice(x, d, 0, count)
    return _residue(bld, _blocked(bld, x, d, stride), d, 0, count)


@register("aten.slice")
def aten_slice(ctx, input, dim=0, start=None, end=None, step=1):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    begin, stop, stride = slice(start, end, step).indices(x.shape[d])
    return strided_slice(ctx, x, d, begin, stop, stride)


@register(operator.getitem)
def getitem(ctx, obj, index):
    if isinstance(obj, (list, tuple)):
        return obj[index]  # an Unavailable item fails where it is used
    x = ctx.val(obj)
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(i, Const) for i in items) and all(
            isinstance(i, Const) or i == slice(None) for i in items):
        # x[:, idx] with index tensors computed by torch: aten.index's form
        return aten_index(ctx, x, [i if isinstance(i, Const) else None for i in items])
    if any(_is_tensor(i) or isinstance(i, (list, torch.Tensor)) for i in items):
        raise ctx.unsupported("indexing with tensors or lists (gather) is not supported, "
                              "except index tensors computed by torch, with full slices")
    if any(i is Ellipsis for i in items):
        k = items.index(Ellipsis)
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        items = items[:k] + [slice(None)] * (x.rank - used) + items[k + 1:]
    bld = ctx.builder
    j = 0
    drops = []
    for item in items:
        if item is None:
            x = x.with_dims(x.dims[:j] + [Bcast(1)] + x.dims[j:])
            j += 1
        elif isinstance(item, bool):
            raise ctx.unsupported("indexing with a bool")
        elif isinstance(item, int):
            i = item + x.shape[j] if item < 0 else item
            x = bld.slice(x, j, i, 1)
            drops.append(j)
            j += 1
        elif isinstance(item, slice):
            begin, stop, stride = item.indices(x.shape[j])
            x = strided_slice(ctx, x, j, begin, stop, stride)
            j += 1
        else:
            raise ctx.unsupported(f"index of type {type(item).__name__}")
    return bld.drop_dims(x, drops)



# -- Python-level helpers FX records ----------------------------------------------------


@register(builtins.getattr)
def getattr_(ctx, obj, name):
    if isinstance(obj, list) and len(obj) == 2 and name in ("values", "indices"):
        return obj[0 if name == "values" else 1]  # torch.max(x, dim).values
    if name == "T":
        x = ctx.val(obj)
        return x.with_dims(list(reversed(x.dims)))
    if name == "mT":
        return transpose(ctx, obj, -2, -1)
    raise ctx.unsupported(f"tensor attribute '{name}'")


@register(".__getitem__")
def getitem_method(ctx, obj, index):
    return getitem(ctx, obj, index)

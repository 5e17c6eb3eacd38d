"""Indexing and resampling at positions torch computes on the host.

Core ATen's index ops (`index.Tensor`, `index_select`, `gather`, `flip`,
`diagonal`, `roll`'s `index_select`), reflection and replication padding,
nearest and linear upsampling, adaptive average pooling to any size,
`cumsum`, `slice_scatter` / `select_scatter`: every one reads elements
at positions that depend on shapes and on constant or integer-input data
only, so torch computes the positions (or the weights) and the program
does one of:

* a slice per run of consecutive positions, assembled (at most 2 runs: a
  roll, a crop);
* one `doppler.gather` along the dim at an i64 argument (a permutation,
  a reflection, a repeat of edge elements, nearest upsampling); several
  dims at once gather from the tensor with those dims merged;
* one einsum with a constant (out x in) matrix along the dim (linear
  interpolation, adaptive averaging, cumulative sums): the matrix is an
  argument, as every constant of the frontend is.

Positions computed from float data (a gather on data) are refused: the
indices would be computed by the program, which Doppler programs do not do.
"""

import math

import torch
import torch.nn.functional as F

from .frontend import Const, Unavailable
from .ir import LETTERS, Bcast
from .ops_common import _check_dtype_arg, _dim, _is_number
from .ops_table import register


def constant_argument(ctx, tensor, label, index=False):
    """`tensor` (computed here from shapes and constants) as an argument of
    the program, named after the current node."""
    const = Const(ctx.node, tensor)
    return ctx.constant(const, tensor, f"{ctx.node.name}.{label}", index=index)


def _runs(positions):
    runs = []  # [start, length] of consecutive positions
    for p in positions:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    return runs


def take(ctx, x, d, positions, label="positions"):
    """Logical dim `d` of `x` at the constant `positions` (ints in range):
    slices for at most 2 runs of consecutive positions, else a gather."""
    bld = ctx.builder
    runs = _runs(positions)
    if len(runs) <= 2:
        pieces = [bld.slice(x, d, start, length) for start, length in runs]
        if len(pieces) == 1:
            return pieces[0]
        return bld.concat([bld.materialize(p) for p in pieces], d)
    index = constant_argument(ctx, torch.tensor(positions, dtype=torch.int64), label, True)
    return bld.gather(x, index, "i64", axis=d)


def _host_indices(ctx, value, what="indices"):
    """An integer index tensor computed by torch (a Const); an error for
    indices computed from float data."""
    if not (isinstance(value, Const) and isinstance(value.value, torch.Tensor)):
        raise ctx.unsupported(f"{what} computed in the program from float data (a gather on "
                              "data): only indices computed by torch from shapes, constants "
                              "and integer inputs are supported")
    if value.value.dtype == torch.bool or value.value.dtype.is_floating_point:
        raise ctx.unsupported(f"{what} of dtype {value.value.dtype} (integer indices only; a "
                              "boolean mask selects a data-dependent number of elements)")
    return value.value


def _in_range(ctx, index, extent):
    if index.numel() and (int(index.min()) < -extent or int(index.max()) >= extent):
        raise ctx.unsupported(f"an index out of range for extent {extent}")
    return torch.remainder(index.long(), extent)


def gather_at(ctx, x, first, count, index, source):
    """x with its `count` dims from `first` merged, gathered at the linear
    positions `index` (an int64 tensor computed by torch): shape
    x[:first] + index + x[first + count:]. `source`: the Const the
    positions come from (an input's data makes them a derived input)."""
    bld = ctx.builder
    shape = list(x.shape)
    if count > 1:
        merged = shape[:first] + [int(torch.tensor(shape[first:first + count]).prod())] + \
            shape[first + count:]
        x = bld.reshape(x, merged)
    if index.dim() == 1 and not source.inputs:
        return take(ctx, x, first, [int(i) for i in index])
    arg = ctx.constant(source, index.contiguous(), f"{ctx.node.name}.positions", index=True)
    return bld.gather(x, arg, "i64", axis=first)


@register("aten.index")
def aten_index(ctx, input, indices):
    """x[..., i, j, ...] with integer index tensors computed by torch on
    consecutive dims (torch's advanced indexing: the index tensors
    broadcast, the result's indexed dims where the first one was)."""
    x = ctx.val(input)
    given = [(j, i) for j, i in enumerate(indices) if i is not None]
    if not given:
        return x
    dims = [j for j, _ in given]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise ctx.unsupported("indexing with index tensors on dims that are not consecutive")
    values = [_in_range(ctx, _host_indices(ctx, i), x.shape[j]) for j, i in given]
    values = torch.broadcast_tensors(*values)
    linear = torch.zeros_like(values[0])
    for j, v in zip(dims, values):
        linear = linear * x.shape[j] + v
    source = given[0][1]
    if len(given) > 1:
        inputs = frozenset().union(*(i.inputs for _, i in given))
        source = Const(ctx.node, linear, inputs)
    return gather_at(ctx, x, dims[0], len(dims), linear, source)


@register("aten.index_select", torch.index_select, ".index_select")
def index_select(ctx, input, dim, index):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    value = _in_range(ctx, _host_indices(ctx, index), x.shape[d])
    if value.dim() > 1:
        raise ctx.unsupported(f"index_select with an index of rank {value.dim()}")
    return gather_at(ctx, x, d, 1, value.reshape(-1), index)


@register("aten.flip", torch.flip, ".flip")
def flip(ctx, input, dims):
    x = ctx.val(input)
    for d in sorted({_dim(d, x.rank) for d in dims}):
        x = take(ctx, x, d, list(range(x.shape[d] - 1, -1, -1)), f"flip{d}")
    return x


@register("aten.roll", torch.roll, ".roll")
def roll(ctx, input, shifts, dims=()):
    x = ctx.val(input)
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:  # rolls the flattened tensor
        flat = ctx.builder.reshape(x, [int(torch.tensor(x.shape).prod())])
        rolled = roll(ctx, flat, shifts, [0])
        return ctx.builder.reshape(rolled, list(x.shape))
    for s, d in zip(shifts, dims):
        d = _dim(d, x.rank)
        n = x.shape[d]
        x = take(ctx, x, d, [(i - s) % n for i in range(n)], f"roll{d}")
    return x


def _positions_of(ctx, x, view):
    """The linear positions of x's elements that `view` (a function of a
    tensor of x's shape) selects: computed by torch on an arange."""
    total = 1
    for e in x.shape:
        total *= e
    return view(torch.arange(total, dtype=torch.int64).reshape(x.shape))


@register("aten.gather", torch.gather, ".gather")
def gather(ctx, input, dim, index, *, sparse_grad=False, out=None):
    """torch.gather at indices computed by torch: one gather from the
    flattened tensor at the linear positions."""
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    value = _in_range(ctx, _host_indices(ctx, index), x.shape[d])
    linear = _positions_of(ctx, x, lambda a: torch.gather(a, d, value))
    return gather_at(ctx, x, 0, x.rank, linear, Const(ctx.node, linear, index.inputs))


@register("aten.diagonal", torch.diagonal, ".diagonal")
def diagonal(ctx, input, offset=0, dim1=0, dim2=1):
    x = ctx.val(input)
    linear = _positions_of(ctx, x, lambda a: a.diagonal(offset, dim1, dim2))
    return gather_at(ctx, x, 0, x.rank, linear, Const(ctx.node, linear))


# -- padding by reflection and replication ----------------------------------------------


def _pad_positions(n, before, after, mode):
    if mode == "reflect" and (before >= n or after >= n):
        return None
    out = []
    for i in range(-before, n + after):
        if mode == "reflect":
            out.append(-i if i < 0 else 2 * (n - 1) - i if i >= n else i)
        else:
            out.append(min(max(i, 0), n - 1))
    return out


def _index_pad(mode, spatial):
    def emit(ctx, input, padding):
        x = ctx.val(input)
        pads = [int(p) for p in padding]
        if len(pads) != 2 * spatial:
            raise ctx.unsupported(f"{mode} padding {tuple(pads)} for {spatial} spatial dims")
        for k in range(spatial):  # padding lists the last dim first
            d = x.rank - 1 - k
            before, after = pads[2 * k], pads[2 * k + 1]
            if before < 0 or after < 0:
                raise ctx.unsupported(f"negative {mode} padding {tuple(pads)}")
            positions = _pad_positions(x.shape[d], before, after, mode)
            if positions is None:
                raise ctx.unsupported(f"reflection padding {before}, {after} of extent "
                                      f"{x.shape[d]} (torch requires less than the extent)")
            if before or after:
                x = take(ctx, x, d, positions, f"{mode}{d}")
        return x
    return emit


for _s in (1, 2, 3):
    register(f"aten.reflection_pad{_s}d")(_index_pad("reflect", _s))
    register(f"aten.replication_pad{_s}d")(_index_pad("replicate", _s))


# -- linear maps along one dim: interpolation, adaptive averaging, cumsum ----------------


def along(ctx, x, d, matrix, label):
    """The einsum y[..., i, ...] = sum_k matrix[i, k] x[..., k, ...] along
    logical dim `d` (matrix: a float tensor computed by torch, an argument)."""
    m = constant_argument(ctx, matrix.to(ctx.dtype).contiguous(), label)
    letters = LETTERS[:x.rank]
    new = LETTERS[x.rank]
    out = letters[:d] + new + letters[d + 1:]
    shape = list(x.shape)
    shape[d] = matrix.shape[0]
    return ctx.builder.einsum([(x, letters), (m, new + letters[d])], out, shape, "mul",
                              agg="add")


def _matrix_1d(extent, op):
    """op (a torch function of an (N, C, L) tensor) as an (out x extent)
    matrix: op applied to the identity, one basis vector per channel."""
    eye = torch.eye(extent, dtype=torch.float64).reshape(1, extent, extent)
    return op(eye)[0].transpose(0, 1).contiguous()


def adaptive_average(ctx, x, sizes):
    """Adaptive average pooling of the trailing len(sizes) dims to any
    sizes (torch's bins: floor(i * in / out) to ceil((i + 1) * in / out)):
    an einsum per dim with the averaging matrix."""
    spatial = len(sizes)
    for k, size in enumerate(sizes):
        d = x.rank - spatial + k
        if size != x.shape[d]:
            matrix = _matrix_1d(x.shape[d], lambda e, s=size: F.adaptive_avg_pool1d(e, s))
            x = along(ctx, x, d, matrix, f"average{d}")
    return x


_LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


def _scale_list(scales, spatial):
    """Per-dim scales from aten's forms: `.vec`'s (scale_factors,) list or
    None, `.default`'s scales_h, scales_w, ... (each None or a float)."""
    flat = []
    for s in scales:
        flat.extend(s if isinstance(s, (list, tuple)) else [s])
    if not flat or all(s is None for s in flat):
        return [None] * spatial
    if len(flat) == 1:
        flat = flat * spatial
    return [None if s is None else float(s) for s in flat]


def _resample(ctx, input, output_size, scales, spatial, mode, align_corners=None):
    """Upsampling of the trailing `spatial` dims, dim by dim (torch's
    nearest and (bi/tri)linear modes are separable): nearest as a gather
    (or slices), linear as an einsum with the interpolation matrix, both
    computed by torch's own 1-d op on the identity."""
    x = ctx.val(input)
    out_spatial = ctx.shape[len(ctx.shape) - spatial:]
    scales = _scale_list(scales, spatial)
    for k in range(spatial):
        d = x.rank - spatial + k
        size, scale = out_spatial[k], scales[k]
        if mode.startswith("nearest"):
            def op(e, size=size, scale=scale):
                return F.interpolate(e, size=None if scale else size,
                                     scale_factor=scale, mode=mode)
            matrix = _matrix_1d(x.shape[d], op)
            if matrix.shape[0] != size:
                matrix = _matrix_1d(x.shape[d], lambda e, s=size: F.interpolate(
                    e, size=s, mode=mode))
            positions = [int(i) for i in matrix.argmax(dim=1)]
            if positions != list(range(x.shape[d])):
                x = take(ctx, x, d, positions, f"nearest{d}")
        else:
            def op(e, size=size, scale=scale):
                return F.interpolate(e, size=None if scale else size, scale_factor=scale,
                                     mode="linear", align_corners=align_corners)
            matrix = _matrix_1d(x.shape[d], op)
            if matrix.shape[0] != size:
                matrix = _matrix_1d(x.shape[d], lambda e, s=size: F.interpolate(
                    e, size=s, mode="linear", align_corners=align_corners))
            x = along(ctx, x, d, matrix, f"linear{d}")
    return x


def _upsample_nearest(spatial, mode="nearest"):
    def emit(ctx, input, output_size=None, *scales):
        return _resample(ctx, input, output_size, scales, spatial, mode)
    return emit


def _upsample_linear(spatial):
    def emit(ctx, input, output_size, align_corners, *scales):
        return _resample(ctx, input, output_size, scales, spatial, "linear", align_corners)
    return emit


for _s in (1, 2, 3):
    register(f"aten.upsample_nearest{_s}d")(_upsample_nearest(_s))
    register(f"aten._upsample_nearest_exact{_s}d")(_upsample_nearest(_s, "nearest-exact"))
    register(f"aten.upsample_{('linear', 'bilinear', 'trilinear')[_s - 1]}{_s}d")(
        _upsample_linear(_s))


@register("aten.cumsum", torch.cumsum, ".cumsum")
def cumsum(ctx, input, dim, *, dtype=None, out=None):
    """Cumulative sum along a dim: an einsum with the lower-triangular
    matrix of ones (n^2 multiply-adds along the dim, each output a sum of
    its prefix as torch's is)."""
    _check_dtype_arg(ctx, dtype)
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    n = x.shape[d]
    return along(ctx, x, d, torch.tril(torch.ones(n, n, dtype=torch.float64)), f"cumsum{d}")


# -- scatters into static positions ---------------------------------------------------------


@register("aten.slice_scatter", torch.slice_scatter if hasattr(torch, "slice_scatter")
          else None)
def slice_scatter(ctx, input, src, dim=0, start=None, end=None, step=1):
    """`input` with `src` written at input[start:end:step] along dim: the
    elements of each replaced by a gather from both (slices and an
    assemble for step 1)."""
    x, s = ctx.val(input), ctx.val(src)
    d = _dim(dim, x.rank)
    n = x.shape[d]
    begin, stop, stride = slice(start, end, step).indices(n)
    written = list(range(begin, stop, stride))
    bld = ctx.builder
    if stride == 1 or len(written) <= 1:
        parts = []
        if begin > 0:
            parts.append(bld.slice(x, d, 0, begin))
        parts.append(s)
        if begin + len(written) < n:
            parts.append(bld.slice(x, d, begin + len(written), n - begin - len(written)))
        return bld.concat([bld.materialize(p) for p in parts], d) if len(parts) > 1 else s
    both = bld.concat([bld.materialize(x), bld.materialize(s)], d)
    where = {p: n + k for k, p in enumerate(written)}
    return take(ctx, both, d, [where.get(i, i) for i in range(n)], f"scatter{d}")


@register("aten.select_scatter", torch.select_scatter if hasattr(torch, "select_scatter")
          else None)
def select_scatter(ctx, input, src, dim, index):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    i = index % x.shape[d]
    s = ctx.val(src)
    s = s.with_dims(list(s.dims[:d]) + [Bcast(1)] + list(s.dims[d:]))
    return slice_scatter(ctx, x, s, d, i, i + 1, 1)


def _scatter(ctx, input, src, place, label, host_args):
    """`input` with elements of `src` (a tensor, or a number) written where
    `place(positions, sources)` puts them: torch runs `place` on input's
    linear positions (an arange) with `sources` = N + src's positions, and
    the program gathers from [input, src] flattened at the result.
    `host_args`: the Consts `place` reads (indices, masks): positions from
    an input's data are a derived input."""
    x = ctx.val(input)
    bld = ctx.builder
    total = math.prod(x.shape)
    if _is_number(src):
        s = bld.fill(float(src), [1])
        sources = torch.tensor(total, dtype=torch.int64)
    else:
        s = ctx.val(src)
        sources = total + torch.arange(math.prod(s.shape), dtype=torch.int64).reshape(s.shape)
        s = bld.reshape(s, [math.prod(s.shape)])
    positions = place(torch.arange(total, dtype=torch.int64).reshape(x.shape), sources)
    flat = bld.concat([bld.materialize(bld.reshape(x, [total])), bld.materialize(s)], 0)
    inputs = frozenset().union(*(c.inputs for c in host_args if isinstance(c, Const)))
    if not inputs:
        return bld.reshape(take(ctx, flat, 0, [int(i) for i in positions.reshape(-1)], label),
                           list(x.shape))
    arg = ctx.constant(Const(ctx.node, positions, inputs), positions.contiguous(),
                       f"{ctx.node.name}.{label}", index=True)
    return bld.gather(flat, arg, "i64", axis=0)


@register("aten.index_put", ".index_put", torch.index_put)
def index_put(ctx, input, indices, values, accumulate=False):
    """x[indices] = values (index tensors computed by torch; a repeated
    position takes the last value written, as torch's CPU kernel does)."""
    host = [None if i is None else _host_indices(ctx, i) for i in indices]
    key = tuple(slice(None) if i is None else i for i in host)  # x[key] is x[indices]
    if accumulate:
        x = ctx.val(input)
        targets = _positions_of(ctx, x, lambda a: a[key])
        v = ctx.val(values)
        sources = torch.arange(math.prod(v.shape)).reshape(v.shape).expand_as(targets)
        return _accumulate(ctx, x, v, targets, sources, [i for i in indices if i is not None])
    return _scatter(ctx, input, values,
                    lambda a, v: a.index_put(tuple(host), v.expand_as(a[key])),
                    "put", [i for i in indices if i is not None])


# The largest (positions x sources) matrix an accumulating scatter is
# written as: 2^24 entries (64 MB in f32).
_ACCUMULATE_LIMIT = 1 << 24


def _accumulate(ctx, x, src, targets, sources, host_args):
    """x + the elements of `src` summed into x's linear positions: source
    element sources[k] (a linear position in src) adds to targets[k] (both
    computed by torch). One einsum with the constant (positions x sources)
    matrix of counts, an argument (a derived input where the indices come
    from an input); a repeated position sums, as torch's accumulate does."""
    total, count = math.prod(x.shape), math.prod(src.shape)
    if total * count > _ACCUMULATE_LIMIT:
        raise ctx.unsupported(f"an accumulating scatter of {count} elements into {total} "
                              f"(its matrix would exceed {_ACCUMULATE_LIMIT} entries)")
    matrix = torch.zeros(total, count, dtype=ctx.dtype)
    matrix.index_put_((targets.reshape(-1), sources.reshape(-1)),
                      torch.ones(targets.numel(), dtype=ctx.dtype), accumulate=True)
    inputs = frozenset().union(*(c.inputs for c in host_args if isinstance(c, Const)))
    m = ctx.constant(Const(ctx.node, matrix, inputs), matrix, f"{ctx.node.name}.counts")
    bld = ctx.builder
    flat = bld.reshape(src, [count])
    summed = bld.einsum([(m, "ab"), (flat, "b")], "a", [total], "mul", agg="add")
    return bld.elementwise("add", [x, bld.reshape(summed, list(x.shape))], list(x.shape))


def _scatter_sources(index, src_shape):
    """The linear positions in src of the elements a scatter reads (those
    inside index's shape)."""
    positions = torch.arange(math.prod(src_shape)).reshape(src_shape)
    return positions[tuple(slice(0, n) for n in index.shape)]


@register("aten.scatter_add", ".scatter_add", torch.scatter_add)
def scatter_add(ctx, input, dim, index, src):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    host = _in_range(ctx, _host_indices(ctx, index), x.shape[d])
    targets = _positions_of(ctx, x, lambda a: torch.gather(a, d, host))
    return _accumulate(ctx, x, ctx.val(src), targets,
                       _scatter_sources(host, ctx.val(src).shape), [index])


@register("aten.scatter_reduce", ".scatter_reduce", torch.scatter_reduce
          if hasattr(torch, "scatter_reduce") else None)
def scatter_reduce(ctx, input, dim, index, src, reduce, *, include_self=True):
    if reduce != "sum" or not include_self:
        raise ctx.unsupported(f"scatter_reduce with reduce={reduce!r}, include_self="
                              f"{include_self} (only a sum including self)")
    return scatter_add(ctx, input, dim, index, src)


@register("aten.scatter", ".scatter", torch.scatter)
def scatter(ctx, input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise ctx.unsupported(f"scatter with reduce={reduce!r} (a scatter-reduce)")
    host = _host_indices(ctx, index)
    source = value if src is None else src
    d = _dim(dim, len(ctx.val(input).shape))
    return _scatter(ctx, input, source,
                    lambda a, v: a.scatter(d, host, v if v.dim() else v.item()), "scatter",
                    [index])


@register("aten.masked_scatter", ".masked_scatter", torch.masked_scatter
          if hasattr(torch, "masked_scatter") else None)
def masked_scatter(ctx, input, mask, source):
    """x with source's leading elements where the mask computed by torch
    is true."""
    host = mask.value if isinstance(mask, Const) else None
    if host is None or host.dtype != torch.bool:
        raise ctx.unsupported("masked_scatter with a mask computed in the program")
    return _scatter(ctx, input, source, lambda a, v: a.masked_scatter(host, v), "scatter",
                    [mask])


@register("aten._embedding_bag", "aten._embedding_bag_forward_only", "aten.embedding_bag")
def embedding_bag(ctx, weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                  sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=-1):
    """nn.EmbeddingBag (sum, mean) at ids and offsets computed by torch: the
    rows gathered, then summed per bag by an einsum with the (bags x ids)
    matrix of 1 (sum) or 1 / bag size (mean); padding_idx's entries are
    left out. Only the output is computed (offset2bag and the rest are
    not)."""
    if mode not in (0, 1):
        raise ctx.unsupported("embedding_bag with mode='max' (a segment max)")
    ids = _host_indices(ctx, indices, "embedding_bag ids").reshape(-1)
    starts = _host_indices(ctx, offsets, "embedding_bag offsets").reshape(-1).tolist()
    n = ids.numel()
    bounds = starts + ([] if include_last_offset else [n])
    matrix = torch.zeros(len(bounds) - 1, n, dtype=torch.float64)
    for b, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        keep = [k for k in range(lo, hi) if padding_idx is None or padding_idx < 0
                or int(ids[k]) != padding_idx]
        if keep:
            matrix[b, keep] = 1.0 / len(keep) if mode == 1 else 1.0
    bld = ctx.builder
    w = ctx.val(weight)
    rows = bld.gather(w, ctx.constant(indices, ids.long(), f"{ctx.node.name}.ids", index=True),
                      "i64", axis=0)
    if per_sample_weights is not None:
        scale = bld.reshape(ctx.val(per_sample_weights), [n, 1])
        rows = bld.elementwise("mul", [rows, scale], rows.shape)
    return [along(ctx, rows, 0, matrix, "bags")] + \
        [Unavailable(f"embedding_bag's {what}") for what in
         ("offset2bag", "bag sizes", "max indices")]


__all__ = ["take", "along", "adaptive_average", "constant_argument", "gather_at"]


@register(F.interpolate, F.upsample if hasattr(F, "upsample") else None)
def interpolate(ctx, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """F.interpolate as symbolic_trace records it (torch.export writes the
    aten upsample ops): nearest, nearest-exact, (bi/tri)linear."""
    if antialias:
        raise ctx.unsupported("interpolate with antialias=True")
    spatial = len(ctx.shape) - 2
    scales = None if recompute_scale_factor or scale_factor is None else [scale_factor]
    if mode in ("nearest", "nearest-exact"):
        return _resample(ctx, input, size, scales or (), spatial, mode)
    if mode != _LINEAR.get(spatial):
        raise ctx.unsupported(f"interpolate mode {mode!r} for {spatial} spatial dims")
    return _resample(ctx, input, size, scales or (), spatial, "linear", align_corners)


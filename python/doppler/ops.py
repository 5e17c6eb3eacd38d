"""The table from torch call targets to emitters.

An emitter gets the importer (`ctx`) and the node's arguments with FX nodes
replaced by their values: `Val` (a tensor of the program), `Const` (a value
folded by torch; `ctx.val` turns it into an argument), `IntInput`, or plain
Python values. It returns a `Val` (or a list of them for tuple results).

Keys: Python callables (`torch.matmul`, `F.linear`, `operator.add`), tensor
method names (`"view"`), aten op packets (`"aten.mm"`, for graphs from
`torch.export` or `make_fx`) and leaf module types (`nn.Linear`).
`register()` adds entries (for user functions wrapped with torch.fx.wrap).
"""

import builtins
import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .frontend import Const, IntInput, Unavailable
from .ir import LETTERS, Bcast, Val, is_phys

FUNCTIONS = {}  # callable -> emitter
ATEN = {}  # "aten.name" -> emitter
METHODS = {}  # method name -> emitter
MODULES = {}  # module type -> emitter(ctx, module, qualname, *args)


def register(*targets):
    """Decorator: `fn(ctx, *args, **kwargs)` emits the given targets.

    A target is a callable, "aten.NAME", or ".NAME" for a tensor method.
    """

    def wrap(fn):
        for t in targets:
            if t is None:
                continue
            if isinstance(t, str) and t.startswith("aten."):
                ATEN[t] = fn
            elif isinstance(t, str) and t.startswith("."):
                METHODS[t[1:]] = fn
            else:
                FUNCTIONS[t] = fn
        return fn

    return wrap


def register_module(*types):
    def wrap(fn):
        for t in types:
            if t is not None:
                MODULES[t] = fn
        return fn

    return wrap


def _aten_name(target):
    """'aten.add' for torch.ops.aten.add.Tensor or its packet; None otherwise."""
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        target = packet
    text = str(target)
    if text.startswith("aten."):
        return "aten." + text.split(".")[1]
    qualified = getattr(target, "_qualified_op_name", None)
    if qualified and qualified.startswith("aten::"):
        return "aten." + qualified.split("::")[1]
    return None


def target_name(target):
    aten = _aten_name(target)
    if aten:
        return str(target)
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) \
        or str(target)
    return f"{module}.{name}" if module and module != "builtins" else name


def function_emitter(target):
    emitter = FUNCTIONS.get(target) if _hashable(target) else None
    if emitter is None:
        aten = _aten_name(target)
        if aten:
            emitter = ATEN.get(aten)
    return emitter, target_name(target)


def module_emitter(module):
    for cls in type(module).__mro__:
        if cls in MODULES:
            return MODULES[cls]
    return None


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


# -- helpers ------------------------------------------------------------------


def _is_tensor(x):
    return isinstance(x, (Val, Const, IntInput, Unavailable))


def _is_number(x):
    return isinstance(x, (int, float, bool)) and not isinstance(x, torch.Tensor)


def _dim(d, rank):
    d = int(d)
    if d < -rank or d >= max(rank, 1):
        raise IndexError(f"dim {d} out of range for rank {rank}")
    return d % rank if rank else 0


def _dims(dim, rank):
    if dim is None:
        return list(range(rank))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return list(range(rank))
        return sorted({_dim(d, rank) for d in dim})
    return [_dim(dim, rank)]


def _check_dtype_arg(ctx, dtype):
    if dtype is not None and dtype != ctx.dtype:
        raise ctx.unsupported(f"dtype={dtype} (the program is {ctx.dtype})")


def _power_of_two(c):
    if c == 0 or not math.isfinite(c):
        return False
    m, _ = math.frexp(abs(c))
    return m == 0.5


# -- elementwise arithmetic ----------------------------------------------------

_JOINS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max",
          "min": "min", "pow": "pow"}


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


# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t P(t) exp(-z^2), t = 1 / (1 + p z),
# z >= 0, absolute error below 1.5e-7.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erfc_tail(ctx, a, z_scale):
    """t P(t) exp(-z^2) for z = z_scale * a, a = |x| >= 0 (that is, 1 - erf(z))."""
    bld = ctx.builder
    t = bld.unary(bld.unary(bld.unary(a, "scale", _AS_P * z_scale), "shift", 1.0), "reciprocal")
    poly = bld.unary(t, "scale", _AS_A[4])
    for coeff in reversed(_AS_A[:4]):
        poly = bld.elementwise("mul", [bld.unary(poly, "shift", coeff), t], t.shape)
    e = bld.unary(bld.unary(a, "square"), "scale", -(z_scale * z_scale))
    return bld.elementwise("mul", [poly, bld.unary(e, "exp")], t.shape)


def _gelu_erf(ctx, x):
    """x Phi(x) = (x + |x| erf(|x| / sqrt 2)) / 2, erf by A&S 7.1.26 (abs. error < 1.5e-7)."""
    bld = ctx.builder
    a = bld.unary(x, "abs")
    tail = _erfc_tail(ctx, a, 1.0 / math.sqrt(2.0))
    erf_abs = bld.unary(bld.unary(tail, "neg"), "shift", 1.0)
    s = bld.elementwise("add", [x, bld.elementwise("mul", [a, erf_abs], x.shape)], x.shape)
    return bld.unary(s, "scale", 0.5)


@register(torch.erf, ".erf", "aten.erf")
def erf(ctx, input):
    """erf(x) = sign(x) (1 - tail(|x|)), sign(x) = x / max(|x|, 1e-30)."""
    bld = ctx.builder
    x = ctx.val(input)
    a = bld.unary(x, "abs")
    tail = _erfc_tail(ctx, a, 1.0)
    erf_abs = bld.unary(bld.unary(tail, "neg"), "shift", 1.0)
    sign = bld.elementwise("div", [x, bld.elementwise("max", [a, bld.scalar(1e-30)], x.shape)],
                           x.shape)
    return bld.elementwise("mul", [sign, erf_abs], x.shape)


# -- matrix products ------------------------------------------------------------


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
        for j in range(len(own_batch)):
            if val.shape[j] == 1 and batch_shape[offset + j] != 1:
                val = bld.unitize(val, j)
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
    return _matmul(ctx, input, mat2)


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
    """The extents into which the only user of the current node, a view,
    splits the last dim (keeping the others), or None."""
    users = list(ctx.node.users)
    if len(users) != 1:
        return None
    user = users[0]
    name = user.target if user.op == "call_method" else \
        ("reshape" if user.target is torch.reshape else _aten_name(user.target))
    if user.op not in ("call_method", "call_function") or name not in _VIEWS:
        return None
    meta = user.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        return None
    target = [int(e) for e in meta.shape]
    lead = list(shape[:-1])
    tail = target[len(lead):]
    if target[:len(lead)] != lead or len(tail) < 2 or math.prod(tail) != out_f \
            or any(e == 1 for e in tail):
        return None
    return tail


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
        for j, c in enumerate(t):
            if val.shape[j] == 1 and out_extent.get(c, 1) != 1:
                val = bld.unitize(val, j)
        operands.append((val, letters))
    join = "mul" if len(vals) == 2 else "identity"
    return bld.einsum(operands, "".join(mapping[c] for c in rhs), ctx.shape, join, agg="add")


# -- reductions -------------------------------------------------------------------


def _reduce(ctx, input, dim, keepdim, agg, mean=False, dtype=None):
    _check_dtype_arg(ctx, dtype)
    x = ctx.val(input)
    axes = _dims(dim, x.rank)
    y = ctx.builder.reduce(x, axes, keepdim, agg)
    if mean:
        count = math.prod(x.shape[j] for j in axes)
        y = ctx.builder.unary(y, "scale", 1.0 / count)
    return y


@register(torch.sum, ".sum", "aten.sum")
def sum_(ctx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(ctx, input, dim, keepdim, "add", dtype=dtype)


@register(torch.mean, ".mean", "aten.mean")
def mean(ctx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(ctx, input, dim, keepdim, "add", mean=True, dtype=dtype)


@register(torch.amax, ".amax", "aten.amax")
def amax(ctx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(ctx, input, dim, keepdim, "max")


@register(torch.amin, ".amin", "aten.amin")
def amin(ctx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(ctx, input, dim, keepdim, "min")


@register(torch.max, ".max")
def max_(ctx, input, *args, **kwargs):
    if not args and not kwargs:
        return _reduce(ctx, input, None, False, "max")
    if len(args) == 1 and _is_tensor(args[0]) and not kwargs:
        return _binary(ctx, "max", input, args[0])
    raise ctx.unsupported("max with a dim (it returns indices): use amax")


@register(torch.min, ".min")
def min_(ctx, input, *args, **kwargs):
    if not args and not kwargs:
        return _reduce(ctx, input, None, False, "min")
    if len(args) == 1 and _is_tensor(args[0]) and not kwargs:
        return _binary(ctx, "min", input, args[0])
    raise ctx.unsupported("min with a dim (it returns indices): use amin")


def _var(ctx, input, dim, correction, keepdim):
    bld = ctx.builder
    x = ctx.val(input)
    axes = _dims(dim, x.rank)
    count = math.prod(x.shape[j] for j in axes)
    mu = bld.unary(bld.reduce(x, axes, True, "add"), "scale", 1.0 / count)
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
    mu = bld.unary(bld.reduce(x, axes, True, "add"), "scale", 1.0 / count)
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


# -- activations as modules ------------------------------------------------------

for _cls, _join in ((nn.ReLU, "relu"), (nn.SiLU, "silu"), (nn.Tanh, "tanh"),
                    (nn.Sigmoid, "sigmoid")):
    register_module(_cls)(lambda ctx, module, name, input, _j=_join:
                          ctx.builder.unary(ctx.val(input), _j))


@register_module(nn.GELU)
def gelu_module(ctx, module, name, input):
    return gelu(ctx, input, approximate=getattr(module, "approximate", "none"))


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


@register_module(nn.Dropout)
def dropout_module(ctx, module, name, input):
    return _dropout(ctx, input, module.p, module.training)


# -- no-ops and dtype ---------------------------------------------------------------


@register(".contiguous", ".clone", ".detach", torch.clone, torch.detach, "aten.clone",
          "aten.detach", "aten.alias", "aten.contiguous", "aten.lift_fresh_copy")
def identity(ctx, input, *args, **kwargs):
    return ctx.val(input)


def _same_dtype(ctx, dtype):
    if isinstance(dtype, torch.dtype) and dtype != ctx.dtype:
        raise ctx.unsupported(f"conversion to {dtype} (the program is {ctx.dtype})")


@register(".to", ".type")
def to(ctx, input, *args, **kwargs):
    for a in list(args) + list(kwargs.values()):
        _same_dtype(ctx, a)
    return ctx.val(input)


@register(".float")
def to_float(ctx, input, *args, **kwargs):
    _same_dtype(ctx, torch.float32)
    return ctx.val(input)


@register(".double")
def to_double(ctx, input, *args, **kwargs):
    _same_dtype(ctx, torch.float64)
    return ctx.val(input)


@register(".half")
def to_half(ctx, input, *args, **kwargs):
    _same_dtype(ctx, torch.float16)
    return ctx.val(input)


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
    for j in reversed(axes):
        x = ctx.builder.drop_dim(x, j)
    return x


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
        if shape[lead + j] != x.shape[j]:
            if x.shape[j] != 1:
                raise ctx.unsupported(f"expand of extent {x.shape[j]} to {shape[lead + j]}")
            x = ctx.builder.unitize(x, j)
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


@register(torch.split, ".split", "aten.split", "aten.split_with_sizes")
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


@register("aten.slice")
def aten_slice(ctx, input, dim=0, start=None, end=None, step=1):
    x = ctx.val(input)
    d = _dim(dim, x.rank)
    begin, stop, stride = slice(start, end, step).indices(x.shape[d])
    if stride != 1:
        raise ctx.unsupported(f"slice with step {stride}")
    return ctx.builder.slice(x, d, begin, max(stop - begin, 0))


@register(operator.getitem, "aten.index")
def getitem(ctx, obj, index):
    if isinstance(obj, (list, tuple)):
        return obj[index]  # an Unavailable item fails where it is used
    x = ctx.val(obj)
    items = list(index) if isinstance(index, tuple) else [index]
    if any(_is_tensor(i) or isinstance(i, (list, torch.Tensor)) for i in items):
        raise ctx.unsupported("indexing with tensors or lists (gather) is not supported")
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
            if stride != 1:
                raise ctx.unsupported(f"slicing with step {stride}")
            x = bld.slice(x, j, begin, max(stop - begin, 0))
            j += 1
        else:
            raise ctx.unsupported(f"index of type {type(item).__name__}")
    for d in reversed(drops):
        x = bld.drop_dim(x, d)
    return x


# -- masks and selection -------------------------------------------------------------


def _mask_tensors(ctx, cond):
    """The float keep/fill masks of a folded bool condition."""
    if not isinstance(cond, Const) or not isinstance(cond.value, torch.Tensor):
        raise ctx.unsupported(
            "a mask computed from inputs or parameters: Doppler has no select; the "
            "condition must depend only on buffers and constants (it is then passed as an "
            "argument)")
    return cond.value.to(torch.bool)


def _where(ctx, cond, a, b):
    """torch.where(cond, a, b) for a folded `cond`.

    A number branch becomes a folded argument (number where selected, 0
    elsewhere) added to the other branch; a tensor branch is multiplied by
    its 0/1 mask, except beside an infinite number (x + (-inf where
    masked) is exact for finite x, x * 0 + -inf would be too, but the
    multiply is not needed). A tensor branch must be finite where it is
    not selected (inf * 0 is nan).
    """
    mask = _mask_tensors(ctx, cond)
    bld, shape = ctx.builder, ctx.shape
    base = cond.node.name

    def number_part(value, selected):
        fill = torch.zeros(selected.shape, dtype=ctx.dtype).masked_fill(selected, float(value))
        return ctx.constant(cond, fill, f"{base}.fill_{'t' if selected is mask else 'f'}_{value}")

    def tensor_part(value, selected, beside_inf):
        x = ctx.val(value)
        if beside_inf:
            return x
        keep = ctx.constant(cond, selected.to(ctx.dtype),
                            f"{base}.keep_{'t' if selected is mask else 'f'}")
        return bld.elementwise("mul", [x, keep], shape)

    def infinite(v):
        return _is_number(v) and not math.isfinite(float(v))

    if _is_number(a) and _is_number(b):
        raise ctx.unsupported("torch.where of two numbers")
    parts = []
    for value, selected, other in ((a, mask, b), (b, ~mask, a)):
        if _is_number(value):
            parts.append(number_part(value, selected))
        else:
            parts.append(tensor_part(value, selected, infinite(other)))
    return bld.elementwise("add", parts, shape)


@register(torch.where, "aten.where")
def where(ctx, condition, input=None, other=None):
    if input is None:
        raise ctx.unsupported("torch.where(condition) (indices) is not supported")
    return _where(ctx, condition, input, other)


@register(".masked_fill", torch.masked_fill, "aten.masked_fill")
def masked_fill(ctx, input, mask, value):
    if isinstance(value, Const):
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
    if max_norm is not None:
        raise ctx.unsupported("embedding with max_norm (it renormalises the weight)")
    w = ctx.val(weight)
    if w.rank != 2:
        raise ctx.unsupported("embedding with a weight that is not 2-d")
    vocab = w.shape[0]
    if isinstance(ids, IntInput):
        index = ids.value
        onehot = F.one_hot(index.long(), vocab).to(ctx.dtype)
        arg = ctx.derived_input(ids, onehot, f"{ids.node.name}.onehot")
    elif isinstance(ids, Const) and isinstance(ids.value, torch.Tensor) \
            and not ids.value.dtype.is_floating_point:
        onehot = F.one_hot(ids.value.long(), vocab).to(ctx.dtype)
        arg = ctx.constant(ids, onehot, f"{ids.node.name}.onehot")
    else:
        raise ctx.unsupported(
            "embedding indices must be an integer input of forward or depend only on "
            "buffers and constants (they become one-hot arguments); these are computed")
    letters = LETTERS[:arg.rank - 1]
    v, d = LETTERS[arg.rank - 1], LETTERS[arg.rank]
    return ctx.builder.einsum([(arg, letters + v), (w, v + d)], letters + d, ctx.shape, "mul",
                              agg="add")


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


def _sdpa(ctx, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    if dropout_p:
        raise ctx.unsupported("scaled_dot_product_attention with dropout_p > 0")
    if enable_gqa:
        raise ctx.unsupported("scaled_dot_product_attention with enable_gqa")
    bld = ctx.builder
    q, k, v = ctx.val(query), ctx.val(key), ctx.val(value)
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
            mask = ctx.constant(attn_mask, add, f"{attn_mask.node.name}.additive")
        else:
            mask = ctx.val(attn_mask)
        scores = bld.elementwise("add", [scores, mask], s_shape)
    p = _softmax(ctx, scores, -1)
    return _matmul(ctx, p, v, ctx.shape)


register(getattr(F, "scaled_dot_product_attention", None), "aten.scaled_dot_product_attention")(
    _sdpa)


# -- Python-level helpers FX records ----------------------------------------------------


@register(builtins.getattr)
def getattr_(ctx, obj, name):
    if name == "T":
        x = ctx.val(obj)
        return x.with_dims(list(reversed(x.dims)))
    if name == "mT":
        return transpose(ctx, obj, -2, -1)
    raise ctx.unsupported(f"tensor attribute '{name}'")


@register(".__getitem__")
def getitem_method(ctx, obj, index):
    return getitem(ctx, obj, index)

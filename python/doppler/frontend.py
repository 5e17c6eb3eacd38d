"""torch.fx graph -> doppler-dialect MLIR.

The graph comes from `sources.py` (torch.export decomposed to Core ATen,
symbolic_trace or make_fx) with the role of every placeholder. It is run
once on the example inputs (`ShapeProp`, which also
records every node's shape), then walked node by node; each node's target
is looked up in a table (`ops.py`) whose emitters (`ops_*.py`) write
einsums and glue.

What each node becomes:

* a tensor `placeholder`: a function argument (user inputs first);
* a `get_attr` of a parameter, or a leaf module's parameters: function
  arguments, after the user inputs, in `module.named_parameters()` order;
* anything computed from buffers and literals only (never from an input or
  a parameter: causal masks, rotary tables, `torch.arange` positions) is
  *folded*: torch computes it, and it is passed as an argument (buffers in
  `named_buffers()` order, then folded values in graph order). Nothing is
  baked into the program as a constant;
* anything computed from integer or bool user inputs (and folded values)
  only is a *host value*: torch computes it too (views of `input_ids`,
  attention masks, embedding indices), and where a tensor is needed it is a
  *derived input* argument (float, or i32/i64 for gather indices);
* export bookkeeping (guards, metadata and scalar asserts) runs with the
  graph and emits nothing (`_is_bookkeeping`);
* Python values computed from shapes (`x.size(0)`, `C // n_head`) are static
  and used as such; a Python value computed from tensor data (`.item()`) is
  an error;
* every other node goes to its emitter; an op without one, or an unsupported
  use of one, raises `UnsupportedError` naming the op and the node.

Every emitted op carries `loc("NODE_NAME")`; the results of every node are
checked against the shapes ShapeProp recorded.
"""

import math
import operator
import re

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

from .errors import DopplerError, UnsupportedError
from .ir import Bcast, Builder, Val
from .ops_table import _aten_name
from .sources import pytree, source_for

_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16"}
# Integer arguments (gather indices) keep their type: i32 or i64.
_INDEX_TYPES = {torch.int32: "i32", torch.int64: "i64"}


class Const:
    """A value torch computes on the host: it becomes an argument where a
    tensor is needed. `inputs`: the indices of the user inputs it is
    computed from (empty: folded from buffers and literals only, a
    constant; else a *derived input*, e.g. a float attention mask or the
    embedding indices viewed from an integer input)."""

    __slots__ = ("node", "value", "inputs")

    def __init__(self, node, value, inputs=frozenset()):
        self.node = node
        self.value = value
        self.inputs = frozenset(inputs)


class IntInput(Const):
    """An integer (or bool) user input: computed with on the host (views,
    masks, embedding indices); used as a tensor, its value converted to the
    program's float type is a derived input."""

    __slots__ = ("index",)

    def __init__(self, node, value, index):
        super().__init__(node, value, {index})
        self.index = index


class Unavailable:
    """A result the frontend does not compute (e.g. native_layer_norm's mean)."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what


class ArgSpec:
    """One function argument: its name, where it comes from, its value."""

    KINDS = ("input", "parameter", "buffer", "constant")

    def __init__(self, name, kind, key, tensor, source):
        self.name = name
        self.kind = kind
        self.key = key
        self.tensor = tensor
        self.source = source  # human-readable: "input 0 (x)", "parameter fc1.weight", ...
        self.val = None

    def __repr__(self):
        return f"ArgSpec({self.name!r}, {self.kind}, {tuple(self.tensor.shape)}, {self.source!r})"


class Program:
    """The result of importing a graph.

    `mlir`: the module text; `arguments`: ArgSpecs in function argument
    order (their `tensor`s are the values for the example inputs);
    `node_values`: FX node name -> name of the node whose op produced its
    value (views and no-ops map to their producer; None for arguments);
    `output_tree` and `unflatten(tensors)`: the structure of forward's
    result.
    """

    def __init__(self, mlir, arguments, node_owner, output_tree, graph_module, function,
                 out_spec=None, origin="torch.fx"):
        self.mlir = mlir
        self.out_spec = out_spec
        self.origin = origin
        self.arguments = arguments
        self.node_owner = node_owner
        self.output_tree = output_tree
        self.graph_module = graph_module
        self.function = function

    def unflatten(self, results):
        """forward's result structure with `results` (the function's results, in order)."""

        def build(item):
            if isinstance(item, _ResultIndex):
                return results[item.index]
            if isinstance(item, _Literal):
                return item.value
            if isinstance(item, tuple) and hasattr(item, "_fields"):
                return type(item)(*[build(i) for i in item])
            if isinstance(item, tuple):
                return tuple(build(i) for i in item)
            if isinstance(item, list):
                return [build(i) for i in item]
            if isinstance(item, dict):
                return {k: build(v) for k, v in item.items()}
            return item

        if self.out_spec is not None:  # a flat list of the pytree's leaves
            return pytree.tree_unflatten([build(i) for i in self.output_tree], self.out_spec)
        return build(self.output_tree)


class _ResultIndex:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _Literal:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _contains_tensor(value):
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_contains_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_tensor(v) for v in value.values())
    return False


class _Recorder(ShapeProp):
    """ShapeProp that also keeps the values the import needs."""

    def __init__(self, module, keep):
        super().__init__(module)
        self.keep = keep
        self.values = {}
        self.layouts = {}  # node -> (strides, storage offset) of a tensor result

    def run_node(self, n):
        result = super().run_node(n)
        if self.keep(n, result):
            self.values[n] = result
        if isinstance(result, torch.Tensor) and result.layout == torch.strided:
            self.layouts[n] = (tuple(result.stride()), result.storage_offset())
        return result


# Results of these are static (Python values from shapes) even on tensors.
_STATIC_METHODS = {"size", "dim", "numel", "ndimension", "nelement"}
_STATIC_ATTRS = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad"}
_STATIC_ATEN = {"aten.sym_size", "aten.sym_numel", "aten.sym_stride", "aten.sym_storage_offset"}

# Export bookkeeping: checks on the example inputs (run once with the graph,
# then dropped); they compute nothing the program needs.
_BOOKKEEPING_ATEN = {
    "aten._assert_tensor_metadata", "aten._assert_scalar", "aten._assert_async",
    "aten._functional_assert_async", "aten._functional_assert_scalar",
    "aten.sym_constrain_range", "aten.sym_constrain_range_for_size",
    "aten._functional_sym_constrain_range", "aten._functional_sym_constrain_range_for_size",
    "aten._print",
}
_BOOKKEEPING_FUNCTIONS = {getattr(torch, name, None) for name in
                          ("_assert", "_assert_async", "_check", "_check_is_size",
                           "_check_with")} - {None}


_RANDOM = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
           "bernoulli", "bernoulli_", "normal", "normal_", "uniform", "uniform_",
           "exponential_", "geometric_", "cauchy_", "log_normal_", "multinomial",
           "native_dropout", "poisson"}


def _is_random(n):
    """Whether node `n` draws random numbers (never folded: a program with
    one sample baked in would be wrong)."""
    if n.op == "call_method":
        return n.target in _RANDOM
    if n.op != "call_function":
        return False
    aten = _aten_name(n.target)
    if aten:
        return aten[len("aten."):] in _RANDOM
    return getattr(n.target, "__module__", "") in ("torch", "torch.random") and \
        getattr(n.target, "__name__", "") in _RANDOM


def _is_bookkeeping(n, gm):
    """Whether node `n` is export bookkeeping: the `_guards_fn` call_module of
    an unlifted torch 2.x export, a metadata or scalar assert, a range
    constraint. The one place such nodes are recognised."""
    if n.op == "call_module":
        if n.target.startswith("_guards_fn"):
            return True
        sub = gm.get_submodule(n.target)
        return type(sub).__name__ == "GuardsFn"
    if n.op != "call_function":
        return False
    if n.target in _BOOKKEEPING_FUNCTIONS:
        return True
    return _aten_name(n.target) in _BOOKKEEPING_ATEN


class Importer:
    def __init__(self, source):
        from . import ops  # the table fills itself on import

        self.ops = ops
        self.source = source
        self.gm = source.gm
        self.graph = self.gm.graph
        # Argument order: the module's named_parameters() and named_buffers().
        self.params = {name: i for i, name in reversed(list(enumerate(source.param_order)))}
        self.param_ids = {}
        for name, p in self.gm.named_parameters():
            self.param_ids.setdefault(id(p), name)
        self.buffers = {name: i for i, name in reversed(list(enumerate(source.buffer_order)))}
        self.roles = {}  # placeholder node -> (role, index or qualified name)
        self.values = {}  # placeholder node -> its value
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(source.roles):
            raise DopplerError(f"forward takes {len(placeholders)} input(s) "
                               f"but {len(source.roles)} were given")
        for n, role, value in zip(placeholders, source.roles, source.values):
            self.roles[n] = role
            self.values[n] = value
        self.args = {}  # dedup key -> ArgSpec
        self.arg_names = set()
        self.const_counter = 0
        self.node = None
        self.builder = None
        self.env = {}
        self.owner = {}
        self.layouts = {}

    # -- classification -------------------------------------------------------

    def _attr(self, target):
        obj = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def _placeholder_kind(self, n):
        role, _ = self.roles[n]
        value = self.values[n]
        if role == "parameter":
            return "dynamic"
        if role in ("buffer", "constant"):
            return "const"
        if not isinstance(value, torch.Tensor):
            return "static"
        return "dynamic" if value.dtype.is_floating_point else "host"

    def classify(self):
        """node -> "dynamic" | "host" | "const" | "static" | "skip", by
        dependence: "const" from buffers and literals only, "host" from
        integer inputs (and constants) only, "skip" for export bookkeeping."""
        kinds = {}
        for n in self.graph.nodes:
            if n.op == "output":
                continue
            if n.op == "placeholder":
                kinds[n] = self._placeholder_kind(n)
                continue
            if _is_bookkeeping(n, self.gm):
                kinds[n] = "skip"
                continue
            if n.op == "get_attr":
                attr = self._attr(n.target)
                kinds[n] = "dynamic" if isinstance(attr, torch.nn.Parameter) else "const"
                continue
            if n.op == "call_module":
                sub = self.gm.get_submodule(n.target)
                if any(True for _ in sub.parameters()):
                    kinds[n] = "dynamic"
                    continue
            if _static_query(n):
                kinds[n] = "const"  # a Python value from shapes (static)
                continue
            if _is_random(n):
                kinds[n] = "dynamic"  # its emitter (dropout in eval) or an error
                continue
            inputs = {kinds[m] for m in n.all_input_nodes} - {"skip"}
            if "dynamic" in inputs:
                kinds[n] = "dynamic"
            elif "host" in inputs:
                kinds[n] = "host"
            else:
                kinds[n] = "const"
        return kinds

    def _input_indices(self, n, memo):
        """The user inputs host node `n` is computed from."""
        if n not in memo:
            if n.op == "placeholder":
                role, index = self.roles[n]
                memo[n] = frozenset({index}) if role == "input" else frozenset()
            else:
                memo[n] = frozenset().union(*(self._input_indices(m, memo)
                                               for m in n.all_input_nodes))
        return memo[n]

    # -- arguments --------------------------------------------------------------

    def _unique(self, name):
        name = _sanitize(name)
        base, k = name, 1
        while name in self.arg_names:
            name = f"{base}_{k}"
            k += 1
        self.arg_names.add(name)
        return name

    def argument(self, dedup, name, kind, key, tensor, source, index=False):
        """The Val of a function argument (created once per `dedup` key).
        `index`: an integer tensor kept as i32/i64 (gather indices; other
        integer types become i64), not converted to the program's type."""
        if dedup in self.args:
            return self.args[dedup].val
        if not isinstance(tensor, torch.Tensor):
            raise UnsupportedError(f"{source} is not a tensor", self.node)
        tensor = tensor.detach()
        if index:
            if tensor.dtype not in _INDEX_TYPES:
                tensor = tensor.to(torch.int64)
        elif tensor.dtype != self.dtype:
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
                raise UnsupportedError(
                    f"{source} has dtype {tensor.dtype} but the program's tensors are "
                    f"{self.dtype} (Doppler einsums need one element type; convert the "
                    "module and inputs to one dtype)", self.node)
            tensor = tensor.to(self.dtype)
        spec = ArgSpec(self._unique(name), kind, key, tensor, source)
        spec.val = Val("%" + spec.name, tuple(tensor.shape), range(tensor.dim()), None)
        self.args[dedup] = spec
        return spec.val

    def param(self, qualname, tensor=None):
        if tensor is None:
            tensor = self._attr(qualname)
        key = self.params.get(qualname)
        if key is None:
            name = self.param_ids.get(id(tensor), qualname)
            key = self.params.get(name, len(self.params))
        return self.argument(("param", qualname), qualname, "parameter", (key,), tensor,
                             f"parameter {qualname}")

    def buffer(self, qualname):
        """The argument holding buffer `qualname` of the module (e.g. a batch
        norm's running statistics)."""
        tensor = self._attr(qualname)
        key = self.buffers.get(qualname, len(self.buffers))
        return self.argument(("buffer", qualname), qualname, "buffer", (key,), tensor,
                             f"buffer {qualname}")

    def reshaped_argument(self, val, shape):
        """Argument `val` viewed as `shape` (a new argument), or None when `val`
        is not an argument: a weight split or merged for free."""
        spec = next((a for a in self.args.values() if a.val is val), None)
        if spec is None:
            return None
        shape = [int(e) for e in shape]
        name = f"{spec.name}.{'x'.join(map(str, shape))}"
        return self.argument(("reshaped", spec.name, tuple(shape)), name, spec.kind,
                             spec.key + (1, name), spec.tensor.reshape(shape),
                             f"{spec.source} viewed as {'x'.join(map(str, shape))}")

    def split_argument(self, val, phys_dim, extents):
        """`val`, a view of an argument, with the argument's physical dim
        `phys_dim` split into `extents` (a new argument of the same values,
        viewed the same way); None when `val` is not an argument. The
        builder's hook for reading factored dims without merges."""
        spec = next((a for a in self.args.values() if a.val.ssa == val.ssa), None)
        extents = [int(e) for e in extents]
        if spec is None or len(extents) < 2:
            return None
        shape = list(spec.tensor.shape)
        if math.prod(extents) != shape[phys_dim]:
            return None
        split = self.reshaped_argument(spec.val, shape[:phys_dim] + extents +
                                       shape[phys_dim + 1:])
        extra = len(extents) - 1

        def remap(p):
            return p if p < phys_dim else p + extra

        dims = []
        for d in val.dims:
            if isinstance(d, Bcast):
                dims.append(d)
            elif isinstance(d, tuple):
                dims.append(tuple(q for p in d for q in (
                    range(phys_dim, phys_dim + len(extents)) if p == phys_dim else [remap(p)])))
            elif d == phys_dim:
                dims.append(tuple(range(phys_dim, phys_dim + len(extents))))
            else:
                dims.append(remap(d))
        return split.with_dims(dims)

    def _named_attribute(self, node):
        """(kind, qualified name) of a get_attr node or of an export's buffer or
        constant placeholder; None for other nodes."""
        if node.op == "get_attr":
            if node.target in self.buffers:
                return "buffer", node.target
            return "constant", node.target
        role = self.roles.get(node)
        if role and role[0] in ("buffer", "constant"):
            return role
        return None

    def constant(self, const, tensor=None, name=None, index=False):
        """The argument holding a host-computed value (or `tensor` derived
        from it): a constant, or a derived input when it is computed from
        user inputs. `index`: kept as an i32/i64 tensor (see `argument`)."""
        node = const.node
        value = const.value if tensor is None else tensor
        named = self._named_attribute(node) if tensor is None else None
        if named is not None:
            kind, target = named
            if kind == "buffer":
                return self.argument(("buffer", target, index), target, "buffer",
                                     (self.buffers.get(target, len(self.buffers)),), value,
                                     f"buffer {target}", index)
            return self.argument(("attr", target, index), target, "constant", (0, target),
                                 value, f"tensor attribute {target}", index)
        dedup = ("const", node.name, name)
        if dedup in self.args:
            return self.args[dedup].val
        self.const_counter += 1
        label = name or node.name
        if const.inputs:
            first = min(const.inputs)
            return self.argument(dedup, label, "input", (first, 1, self.const_counter), value,
                                 f"{label} (computed by torch from input {first})", index)
        return self.argument(dedup, label, "constant", (1, self.const_counter), value,
                             f"value of '{node.name}' (folded by torch)", index)

    # -- conversion -------------------------------------------------------------

    def val(self, x, what="operand"):
        """A Val for a tensor operand (host-computed values become arguments)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Const):
            if not isinstance(x.value, torch.Tensor):
                raise UnsupportedError(f"{what} is a Python value, not a tensor", self.node)
            return self.constant(x)
        if isinstance(x, Unavailable):
            raise UnsupportedError(f"{x.what} is not computed by the Doppler frontend",
                                   self.node)
        if isinstance(x, torch.Tensor):
            raise UnsupportedError(f"unexpected tensor {what}", self.node)
        raise UnsupportedError(f"expected a tensor {what}, got {type(x).__name__}", self.node)

    def unsupported(self, message):
        return UnsupportedError(message, self.node)

    def layout(self, node):
        """(strides, storage offset) of node's tensor value on the example
        inputs, or None."""
        return self.layouts.get(node) if isinstance(node, torch.fx.Node) else None

    @property
    def shape(self):
        """The current node's result shape, as ShapeProp recorded it."""
        meta = self.node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            raise self.unsupported("expected a tensor result")
        return tuple(int(e) for e in meta.shape)

    # -- the walk -----------------------------------------------------------------

    def _propagate(self, kinds):
        def keep(n, result):
            return kinds.get(n) in ("const", "static", "host") \
                or not _contains_tensor(result) or n.op == "placeholder"

        recorder = _Recorder(self.gm, keep)
        try:
            with torch.no_grad():
                recorder.propagate(*self.source.run_args)
        except Exception as e:
            raise DopplerError(f"running the module on the example inputs failed: {e}") from e
        self.layouts = recorder.layouts
        return recorder.values

    def run(self):
        kinds = self.classify()
        values = self._propagate(kinds)
        self.dtype = self._program_dtype(values)
        self.builder = Builder(_DTYPES[self.dtype])
        self.builder.split_argument = self.split_argument
        output_node = None
        memo = {}
        for n in self.graph.nodes:
            self.node = n
            self.builder.loc = n.name
            if n.op == "output":
                output_node = n
                continue
            kind = kinds[n]
            if kind == "skip":
                self.env[n] = None
            elif n.op == "placeholder":
                self.env[n] = self._placeholder(n, values[n], kind)
            elif kind in ("const", "host"):
                value = values[n]
                inputs = self._input_indices(n, memo) if kind == "host" else ()
                if _contains_tensor(value):
                    self.env[n] = Const(n, value, inputs)
                elif kind == "host" and not _static_query(n):
                    raise UnsupportedError(
                        "a Python value computed from the data of an input; Doppler programs "
                        "are static", n)
                else:
                    self.env[n] = value
            elif n.op == "get_attr":  # a parameter
                self.env[n] = self.param(n.target)
            elif n in values and values[n] is None:
                self.env[n] = None  # e.g. the attention weights not asked for
            elif not _contains_tensor(values.get(n, torch.empty(0))):
                if not _static_query(n):
                    raise UnsupportedError(
                        "a Python value computed from tensor data (data-dependent); Doppler "
                        "programs are static", n)
                self.env[n] = values[n]
            else:
                result = self.dispatch(n)
                self._check(n, result)
                self.env[n] = result
        if output_node is None:
            raise DopplerError("the graph has no output")
        self.node = output_node
        self.builder.loc = "output"
        return self._finish(output_node)

    def _placeholder(self, n, value, kind):
        role, key = self.roles[n]
        if role == "parameter":
            return self.param(key, value)
        if kind == "static":
            return value
        if kind == "const":
            return Const(n, value)
        if kind == "host":
            return IntInput(n, value, key)
        return self.argument(("input", key), n.name, "input", (key, 0), value,
                             f"input {key} ({n.name})")

    def _program_dtype(self, values):
        floats = [v.dtype for n, v in self.values.items()
                  if self.roles[n][0] == "input" and isinstance(v, torch.Tensor)
                  and v.dtype.is_floating_point]
        if not floats:
            floats = [v.dtype for n, v in self.values.items()
                      if self.roles[n][0] == "parameter" and v.dtype.is_floating_point]
        if not floats:
            floats = [p.dtype for p in self.gm.parameters() if p.dtype.is_floating_point]
        dtype = floats[0] if floats else torch.float32
        if dtype not in _DTYPES:
            raise DopplerError(f"dtype {dtype} is not supported (f32, f64, f16)")
        return dtype

    def _check_inplace(self, n):
        """An in-place op is translated as its functional form: only right when
        nothing reads the mutated value through its old name afterwards."""
        inplace = n.target in _INPLACE or n.kwargs.get("inplace") is True
        if n.op == "call_module":
            inplace = getattr(self.gm.get_submodule(n.target), "inplace", False) is True
        if not inplace or not n.args or not isinstance(n.args[0], torch.fx.Node):
            return
        order = {m: i for i, m in enumerate(self.graph.nodes)}
        later = [u for u in n.args[0].users if u is not n and order[u] > order[n]]
        if later:
            raise UnsupportedError(
                f"an in-place op whose input '{n.args[0].name}' is read again afterwards "
                f"(by '{later[0].name}'): the mutation cannot be followed; use the "
                "out-of-place form", n)

    def dispatch(self, n):
        self._check_inplace(n)
        args = torch.fx.node.map_arg(n.args, lambda m: self.env[m])
        kwargs = torch.fx.node.map_arg(n.kwargs, lambda m: self.env[m])
        if n.op == "call_module":
            module = self.gm.get_submodule(n.target)
            emitter = self.ops.module_emitter(module)
            if emitter is None:
                raise UnsupportedError(f"module {type(module).__name__} is not supported", n)
            return emitter(self, module, n.target, *args, **kwargs)
        if n.op == "call_method":
            emitter = self.ops.METHODS.get(n.target)
            if emitter is None and _is_random(n):
                raise UnsupportedError(f"random numbers ('.{n.target}'): Doppler programs are "
                                       "deterministic; call module.eval()", n)
            if emitter is None:
                raise UnsupportedError(f"tensor method '{n.target}' is not supported", n)
            return emitter(self, *args, **kwargs)
        if n.op == "call_function":
            emitter, name = self.ops.function_emitter(n.target)
            if emitter is None and _is_random(n):
                raise UnsupportedError(f"random numbers ('{name}'): Doppler programs are "
                                       "deterministic; call module.eval()", n)
            if emitter is None:
                raise UnsupportedError(f"function '{name}' is not supported", n)
            return emitter(self, *args, **kwargs)
        raise UnsupportedError(f"FX op '{n.op}' is not supported", n)

    def _check(self, n, result):
        meta = n.meta.get("tensor_meta")

        def check(value, m):
            if isinstance(value, Val):
                if m is None or not hasattr(m, "shape"):
                    raise DopplerError(f"internal error at {n.name}: a tensor where torch has none")
                if tuple(value.shape) != tuple(int(e) for e in m.shape):
                    raise DopplerError(f"internal error at {n.name}: shape {value.shape}, "
                                       f"torch says {tuple(m.shape)}")
                if m.dtype != self.dtype:
                    if not m.dtype.is_floating_point:
                        raise UnsupportedError(
                            f"a {m.dtype} result computed from float data: integer and bool "
                            "arithmetic inside the program is not supported (Doppler programs "
                            "hold float tensors; integer values may only come from integer "
                            "inputs and constants, computed by torch on the host)", n)
                    raise UnsupportedError(f"result dtype {m.dtype} differs from the program's "
                                           f"{self.dtype}", n)
            elif isinstance(value, (list, tuple)) and isinstance(m, (list, tuple)):
                for v, mm in zip(value, m):
                    check(v, mm)

        check(result, meta)
        self.owner[n.name] = _owner_of(result)

    def _finish(self, output_node):
        results = []
        b = self.builder

        def collect(item):
            if isinstance(item, Val):
                val = b.materialize(item)
                if val.owner is None:  # an argument returned as is: copy it
                    val = b.unary(val, "scale", 1.0)
                results.append(val)
                return _ResultIndex(len(results) - 1)
            if isinstance(item, Const):
                return _Literal(item.value)
            if isinstance(item, Unavailable):
                raise UnsupportedError("the output holds a value Doppler does not compute",
                                       output_node)
            if isinstance(item, tuple) and hasattr(item, "_fields"):
                return type(item)(*[collect(i) for i in item])
            if isinstance(item, tuple):
                return tuple(collect(i) for i in item)
            if isinstance(item, list):  # FX's immutable_list too
                return [collect(i) for i in item]
            if isinstance(item, dict):
                return {k: collect(v) for k, v in item.items()}
            return _Literal(item)

        value = torch.fx.node.map_arg(output_node.args[0], lambda m: self.env[m])
        if self.source.user_outputs is not None:
            value = [value[i] for i in self.source.user_outputs]
        if self.source.out_spec is not None:
            tree = [collect(leaf) for leaf in value]
        else:
            tree = collect(value)
        if not results:
            raise DopplerError("forward computes no tensor from its inputs or parameters")
        b.prune(results)
        body = "\n".join(b.lines) + " " + " ".join(r.ssa for r in results) + " "
        # Arguments no op reads (a weight only used viewed otherwise) go;
        # user inputs stay, one per forward input.
        used = [a for a in self.args.values() if a.kind == "input" or
                re.search(re.escape(a.val.ssa) + r"(?![\w.$-])", body)]
        ordered = sorted(used, key=lambda a: (ArgSpec.KINDS.index(a.kind), a.key))
        arg_text = ",\n    ".join(
            f"{a.val.ssa}: {b.type(a.val.phys, _INDEX_TYPES.get(a.tensor.dtype))} "
            f"loc(\"{a.name}\")" for a in ordered)
        res_types = ", ".join(b.type(r.phys) for r in results)
        name = "forward"
        lines = [
            f"// Generated by the doppler Python frontend from the {self.source.origin} "
            f"graph of {type(self.gm).__name__}.",
            "// Arguments: " + ", ".join(f"{a.name} ({a.source})" for a in ordered),
            f"func.func @{name}(\n    {arg_text})\n    -> ({res_types}) {{",
        ]
        lines += b.lines
        lines.append(f"  return {', '.join(r.ssa for r in results)} : {res_types} "
                     f"loc(\"output\")")
        lines.append("}")
        owners = {}
        for n in self.graph.nodes:
            if n.name in self.owner:
                owners[n.name] = self.owner[n.name]
            else:
                owners[n.name] = None
        return Program("\n".join(lines) + "\n", ordered, owners, tree, self.gm, name,
                       self.source.out_spec, self.source.origin)


_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv}


def _static_query(n):
    """Whether node `n` asks for a shape (a static Python value even on a tensor)."""
    if n.op == "call_method" and n.target in _STATIC_METHODS:
        return True
    if n.op == "call_function" and n.target is getattr and len(n.args) > 1 \
            and n.args[1] in _STATIC_ATTRS:
        return True
    if n.op == "call_function" and (_aten_name(n.target) in _STATIC_ATEN or getattr(
            n.target, "__name__", "") in ("sym_size", "sym_numel")):
        return True
    return False


def _owner_of(result):
    if isinstance(result, Val):
        return result.owner
    if isinstance(result, (list, tuple)):
        for r in result:
            if isinstance(r, Val) and r.owner:
                return r.owner
    return None


def import_module(module, example_inputs, example_kwargs=None):
    """A Program for `module` (nn.Module, GraphModule or ExportedProgram)."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    source = source_for(module, tuple(example_inputs), example_kwargs)
    return Importer(source).run()


__all__ = ["import_module", "Program", "ArgSpec", "Const", "IntInput", "Unavailable"]


def _sanitize(name):
    out = "".join(c if (c.isalnum() or c in "_.$-") else "_" for c in name)
    if not out or out[0].isdigit() or out[0] in ".$-":
        out = "_" + out
    return out

"""torch.fx graph -> doppler-dialect MLIR.

The graph is run once on the example inputs (`ShapeProp`, which also
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
* Python values computed from shapes (`x.size(0)`, `C // n_head`) are static
  and used as such; a Python value computed from tensor data (`.item()`) is
  an error;
* every other node goes to its emitter; an op without one, or an unsupported
  use of one, raises `UnsupportedError` naming the op and the node.

Every emitted op carries `loc("NODE_NAME")`; the results of every node are
checked against the shapes ShapeProp recorded.
"""

import operator
import re
import warnings

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

from .errors import DopplerError, UnsupportedError
from .ir import Builder, Val

_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16"}


class Const:
    """A value folded by torch: it becomes an argument where a tensor is needed."""

    __slots__ = ("node", "value")

    def __init__(self, node, value):
        self.node = node
        self.value = value


class IntInput:
    """An integer (or bool) tensor input: usable only as embedding indices."""

    __slots__ = ("node", "value", "index")

    def __init__(self, node, value, index):
        self.node = node
        self.value = value
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

    def __init__(self, mlir, arguments, node_owner, output_tree, graph_module, function):
        self.mlir = mlir
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

    def run_node(self, n):
        result = super().run_node(n)
        if self.keep(n, result):
            self.values[n] = result
        return result


# Results of these are static (Python values from shapes) even on tensors.
_STATIC_METHODS = {"size", "dim", "numel", "ndimension", "nelement"}
_STATIC_ATTRS = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad"}


def trace(module):
    """A GraphModule for `module` (symbolic_trace unless it is one already)."""
    if isinstance(module, torch.fx.GraphModule):
        return module
    if not isinstance(module, torch.nn.Module):
        raise DopplerError(f"expected a torch.nn.Module or torch.fx.GraphModule, "
                           f"got {type(module).__name__}")
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    # Buffers as get_attr proxies: `self.mask[:T, :T]` with a traced T then
    # traces (plain symbolic_trace slices the real tensor and fails).
    tracer.proxy_buffer_attributes = True
    try:
        graph = tracer.trace(module)
    except Exception as e:  # torch raises TraceError, TypeError, ...
        raise DopplerError(
            f"torch.fx.symbolic_trace failed on {type(module).__name__}: {e}. "
            "Write the model with indexing (x.size(0), parts[0]) rather than unpacking "
            "proxies, or pass a GraphModule (torch.export where available).") from e
    name = module.__class__.__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


def from_exported_program(exported):
    """The GraphModule of a torch.export ExportedProgram (torch 2.x)."""
    module = exported.module() if hasattr(exported, "module") else exported.graph_module
    return module


def _make_fx_fallback(module, example_inputs, traced):
    """make_fx's aten-level graph of `module` on `example_inputs`, for modules
    symbolic_trace cannot trace (torch's own nn.TransformerEncoderLayer and
    nn.MultiheadAttention branch on flags and shapes); `traced` is
    symbolic_trace's error. make_fx runs the module and fails on
    data-dependent control flow too, so the graph does not depend on the
    example values. Grad mode stays on: without it torch takes its fused
    inference kernels (aten._transformer_encoder_layer_fwd), which Doppler
    does not decompose. Functionalized where functorch has it, so that
    in-place ops (an LSTM's add_, sigmoid_) become out-of-place ones."""
    try:
        from torch.fx.experimental.proxy_tensor import make_fx
    except ImportError:
        raise traced from None
    try:
        from torch.func import functionalize
    except ImportError:
        try:
            from functorch.experimental import functionalize
        except ImportError:
            functionalize = None
    try:
        with torch.enable_grad():
            gm = make_fx(functionalize(module) if functionalize else module)(*example_inputs)
    except Exception as e:  # noqa: BLE001 - torch raises several kinds
        raise DopplerError(f"{traced} make_fx failed as well: {e}") from e
    warnings.warn(
        f"torch.fx.symbolic_trace cannot trace {type(module).__name__} "
        f"({traced.__cause__}); using make_fx's aten-level graph instead: node names "
        "are aten ops' and parameters are folded constants",
        stacklevel=3)
    return gm


def _normalize_module(module, example_inputs):
    if type(module).__name__ == "ExportedProgram":
        return from_exported_program(module)
    try:
        return trace(module)
    except DopplerError as traced:
        if isinstance(module, torch.fx.GraphModule) or not isinstance(module, torch.nn.Module):
            raise
        return _make_fx_fallback(module, example_inputs, traced)


def _sanitize(name):
    out = "".join(c if (c.isalnum() or c in "_.$-") else "_" for c in name)
    if not out or out[0].isdigit() or out[0] in ".$-":
        out = "_" + out
    return out


class Importer:
    def __init__(self, gm, example_inputs, original=None):
        from . import ops  # the table fills itself on import

        self.ops = ops
        self.gm = gm
        self.inputs = tuple(example_inputs)
        self.graph = gm.graph
        # Argument order: the original module's named_parameters() and
        # named_buffers() (a traced GraphModule holds them in order of use).
        order = original if isinstance(original, torch.nn.Module) else gm
        self.params = {}  # qualified name -> index in named_parameters
        for i, (name, p) in enumerate(order.named_parameters()):
            self.params.setdefault(name, i)
        self.param_ids = {}
        for name, p in gm.named_parameters():
            self.param_ids.setdefault(id(p), name)
        self.buffers = {}
        for i, (name, b) in enumerate(order.named_buffers()):
            self.buffers.setdefault(name, i)
        self.args = {}  # dedup key -> ArgSpec
        self.arg_names = set()
        self.const_counter = 0
        self.node = None
        self.builder = None
        self.env = {}
        self.owner = {}

    # -- classification -------------------------------------------------------

    def _attr(self, target):
        obj = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def classify(self):
        """node -> "dynamic" | "const" | "static" (before running: by dependence)."""
        kinds = {}
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(self.inputs):
            raise DopplerError(f"forward takes {len(placeholders)} input(s) "
                               f"but {len(self.inputs)} example input(s) were given")
        for i, n in enumerate(placeholders):
            kinds[n] = "dynamic" if isinstance(self.inputs[i], torch.Tensor) else "static"
        for n in self.graph.nodes:
            if n.op == "placeholder" or n.op == "output":
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
            inputs = [kinds[m] for m in n.all_input_nodes]
            if all(k in ("const", "static") for k in inputs):
                kinds[n] = "const"
            else:
                kinds[n] = "dynamic"
        return kinds

    # -- arguments --------------------------------------------------------------

    def _unique(self, name):
        name = _sanitize(name)
        base, k = name, 1
        while name in self.arg_names:
            name = f"{base}_{k}"
            k += 1
        self.arg_names.add(name)
        return name

    def argument(self, dedup, name, kind, key, tensor, source):
        """The Val of a function argument (created once per `dedup` key)."""
        if dedup in self.args:
            return self.args[dedup].val
        if not isinstance(tensor, torch.Tensor):
            raise UnsupportedError(f"{source} is not a tensor", self.node)
        tensor = tensor.detach()
        if tensor.dtype != self.dtype:
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

    def param(self, qualname):
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

    def constant(self, const, tensor=None, name=None):
        """The argument holding a folded value (or `tensor` derived from it)."""
        node = const.node
        value = const.value if tensor is None else tensor
        if tensor is None and node.op == "get_attr":
            target = node.target
            if target in self.buffers:
                return self.argument(("buffer", target), target, "buffer",
                                     (self.buffers[target],), value, f"buffer {target}")
            return self.argument(("attr", target), target, "constant", (0, target), value,
                                 f"tensor attribute {target}")
        self.const_counter += 1
        dedup = ("const", node.name, name)
        if dedup in self.args:
            return self.args[dedup].val
        label = name or node.name
        return self.argument(dedup, label, "constant", (1, self.const_counter), value,
                             f"value of '{node.name}' (folded by torch)")

    def derived_input(self, item, tensor, name):
        """An argument computed from user input `item` (an IntInput), e.g. a one-hot."""
        return self.argument(("input", item.index, name), name, "input", (item.index, 1),
                             tensor, f"{name} (from input {item.index}, {item.node.name})")

    # -- conversion -------------------------------------------------------------

    def val(self, x, what="operand"):
        """A Val for a tensor operand (folded values become arguments)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Const):
            if not isinstance(x.value, torch.Tensor):
                raise UnsupportedError(f"{what} is a Python value, not a tensor", self.node)
            return self.constant(x)
        if isinstance(x, IntInput):
            raise UnsupportedError(
                f"integer input '{x.node.name}' used as a tensor {what}: integer tensors "
                "are supported only as embedding indices", self.node)
        if isinstance(x, Unavailable):
            raise UnsupportedError(f"{x.what} is not computed by the Doppler frontend",
                                   self.node)
        if isinstance(x, torch.Tensor):
            raise UnsupportedError(f"unexpected tensor {what}", self.node)
        raise UnsupportedError(f"expected a tensor {what}, got {type(x).__name__}", self.node)

    def unsupported(self, message):
        return UnsupportedError(message, self.node)

    @property
    def shape(self):
        """The current node's result shape, as ShapeProp recorded it."""
        meta = self.node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            raise self.unsupported("expected a tensor result")
        return tuple(int(e) for e in meta.shape)

    # -- the walk -----------------------------------------------------------------

    def run(self):
        kinds = self.classify()

        def keep(n, result):
            return kinds.get(n) in ("const", "static") or not _contains_tensor(result) \
                or n.op == "placeholder"

        recorder = _Recorder(self.gm, keep)
        try:
            with torch.no_grad():
                recorder.propagate(*self.inputs)
        except Exception as e:
            raise DopplerError(f"running the module on the example inputs failed: {e}") from e
        values = recorder.values
        self.dtype = self._program_dtype(kinds, values)
        self.builder = Builder(_DTYPES[self.dtype])
        output_node = None
        placeholder_index = 0
        for n in self.graph.nodes:
            self.node = n
            self.builder.loc = n.name
            if n.op == "placeholder":
                value = values[n]
                index = placeholder_index
                placeholder_index += 1
                if not isinstance(value, torch.Tensor):
                    self.env[n] = value
                elif value.dtype.is_floating_point:
                    self.env[n] = self.argument(("input", index), n.name, "input", (index, 0),
                                                value, f"input {index} ({n.name})")
                else:
                    self.env[n] = IntInput(n, value, index)
                continue
            if n.op == "output":
                output_node = n
                continue
            kind = kinds[n]
            if kind == "const":
                value = values[n]
                self.env[n] = Const(n, value) if _contains_tensor(value) else value
                continue
            if n.op == "get_attr":  # a parameter
                self.env[n] = self.param(n.target)
                continue
            if not _contains_tensor(values.get(n, torch.empty(0))):
                if not _static_query(n):
                    raise UnsupportedError(
                        "a Python value computed from tensor data (data-dependent); Doppler "
                        "programs are static", n)
                self.env[n] = values[n]
                continue
            result = self.dispatch(n)
            self._check(n, result)
            self.env[n] = result
        if output_node is None:
            raise DopplerError("the graph has no output")
        self.node = output_node
        self.builder.loc = "output"
        return self._finish(output_node)

    def _program_dtype(self, kinds, values):
        for n in self.graph.nodes:
            if n.op == "placeholder" and isinstance(values.get(n), torch.Tensor) \
                    and values[n].dtype.is_floating_point:
                dtype = values[n].dtype
                break
        else:
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
            if emitter is None:
                raise UnsupportedError(f"tensor method '{n.target}' is not supported", n)
            return emitter(self, *args, **kwargs)
        if n.op == "call_function":
            emitter, name = self.ops.function_emitter(n.target)
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
            if isinstance(item, (IntInput, Unavailable)):
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
        tree = collect(value)
        if not results:
            raise DopplerError("forward computes no tensor from its inputs or parameters")
        body = "\n".join(b.lines) + " " + " ".join(r.ssa for r in results) + " "
        # Arguments no op reads (a weight only used viewed otherwise) go;
        # user inputs stay, one per forward input.
        used = [a for a in self.args.values() if a.kind == "input" or
                re.search(re.escape(a.val.ssa) + r"(?![\w.$-])", body)]
        ordered = sorted(used, key=lambda a: (ArgSpec.KINDS.index(a.kind), a.key))
        arg_text = ",\n    ".join(
            f"{a.val.ssa}: {b.type(a.val.phys)} loc(\"{a.name}\")" for a in ordered)
        res_types = ", ".join(b.type(r.phys) for r in results)
        name = "forward"
        lines = [
            "// Generated by the doppler Python frontend from torch.fx graph of "
            f"{type(self.gm).__name__}.",
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
        return Program("\n".join(lines) + "\n", ordered, owners, tree, self.gm, name)


_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv}


def _static_query(n):
    """Whether node `n` asks for a shape (a static Python value even on a tensor)."""
    if n.op == "call_method" and n.target in _STATIC_METHODS:
        return True
    if n.op == "call_function" and n.target is getattr and len(n.args) > 1 \
            and n.args[1] in _STATIC_ATTRS:
        return True
    if n.op == "call_function" and getattr(n.target, "__name__", "") in ("sym_size", "sym_numel"):
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


def import_module(module, example_inputs):
    """A Program for `module` (nn.Module, GraphModule or ExportedProgram)."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    gm = _normalize_module(module, tuple(example_inputs))
    return Importer(gm, tuple(example_inputs), module).run()


__all__ = ["import_module", "trace", "Program", "ArgSpec", "Const", "IntInput", "Unavailable"]

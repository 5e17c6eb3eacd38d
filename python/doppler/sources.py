"""Where the graph comes from: torch.export (torch 2.x, the first-class path),
torch.fx.symbolic_trace, or make_fx (torch 1.13's fallback).

Each path gives a `Source`: a GraphModule and, for every placeholder, its
role (a user input, a parameter, a buffer, a lifted constant) and value,
plus the pytree structure of the user outputs. The importer
(`frontend.Importer`) walks the graph without knowing which path made it.

torch.export: `torch.export.export(module, args, strict=False)`, then
`run_decompositions()` to the Core ATen op set (an `ExportedProgram` handed
in is decomposed too). The decomposition table is torch's default one, except
that `aten._safe_softmax` and `aten.softplus` are kept (their decompositions
compare computed values, a bool computation on data; the emitters compute
the same results without one), and so is
`aten.scaled_dot_product_attention`: its emitter is the attention itself
(a few einsums), and torch 2.15's decomposition of it fails to retrace on
batches of more than one (GPT-2 at batch 2: the CPU kernel's output layout,
(B, L, H, E) viewed as (B, H, L, E), is not the decomposition's, and a
later `view` of it stops run_decompositions). The export's placeholders are mapped by `ep.graph_signature`:
parameters, buffers (persistent or not) and lifted constants become
arguments of their kind, user inputs are the flattened (args, kwargs).
"""

import inspect
import warnings

import torch
import torch.fx

from .errors import DopplerError

try:  # torch >= 1.13
    import torch.utils._pytree as pytree
except ImportError:  # pragma: no cover
    pytree = None


class Source:
    """A graph and what its placeholders hold.

    `roles`: per placeholder, in graph order, ("input", index) for the
    index-th flattened user input, or ("parameter" | "buffer" | "constant",
    qualified name). `values`: the placeholders' values, same order.
    `run_args`: what the GraphModule is called with to run it once (the
    flat values, or the structured inputs of a pytree-flattened trace).
    `out_spec`: the pytree spec of the user outputs, or None when the
    output node's argument is the structure itself. `user_outputs`: the
    positions of the user outputs in a flat output tuple (None: all).
    `param_order` / `buffer_order`: qualified names in the module's order.
    """

    def __init__(self, gm, roles, values, run_args=None, out_spec=None, user_outputs=None,
                 param_order=(), buffer_order=(), origin="torch.fx"):
        self.gm = gm
        self.roles = list(roles)
        self.values = list(values)
        self.run_args = list(values) if run_args is None else list(run_args)
        self.out_spec = out_spec
        self.user_outputs = user_outputs
        self.param_order = list(param_order)
        self.buffer_order = list(buffer_order)
        self.origin = origin


def torch_version():
    """torch's (major, minor)."""
    parts = torch.__version__.split("+")[0].split(".")
    return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def has_export():
    """Whether torch.export with default_decompositions (torch 2.6+) is available."""
    export = getattr(torch, "export", None)
    return export is not None and hasattr(export, "export") and \
        hasattr(export, "default_decompositions")


def is_exported_program(obj):
    return type(obj).__name__ == "ExportedProgram" and hasattr(obj, "graph_signature")


def flatten_inputs(example_inputs, example_kwargs=None):
    """The user inputs as a flat list (tuples, lists, dicts of tensors
    flattened in pytree order) and their spec."""
    if pytree is None:
        return list(example_inputs), None
    flat, spec = pytree.tree_flatten((tuple(example_inputs), dict(example_kwargs or {})))
    return flat, spec


# -- torch.export ------------------------------------------------------------------


# Ops kept whole: their decompositions compare computed values (bool
# arithmetic on data, which Doppler programs do not hold), their emitters
# compute the same values without; attention's emitter is its math, and its
# decomposition does not retrace at batch > 1 in torch 2.15 (above).
_KEPT = ("_safe_softmax", "softplus", "scaled_dot_product_attention")


def decomposition_table():
    """torch's Core ATen decompositions, except the ops in _KEPT."""
    table = torch.export.default_decompositions()
    for name in _KEPT:
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None and packet.default in table:
            table.pop(packet.default)
    return table


def export_module(module, example_inputs, example_kwargs=None):
    """torch.export.export(module, inputs, strict=False), decomposed."""
    try:
        exported = torch.export.export(module, tuple(example_inputs), kwargs=example_kwargs,
                                       strict=False)
    except Exception as e:  # noqa: BLE001 - export raises many kinds
        raise DopplerError(f"torch.export.export failed on {type(module).__name__}: "
                           f"{type(e).__name__}: {_first_lines(e)}") from e
    return exported


def _first_lines(error, count=6):
    lines = [line for line in str(error).splitlines() if line.strip()]
    return "\n".join(lines[:count])


def from_exported(exported, example_inputs, example_kwargs=None):
    """A Source for an ExportedProgram (decomposed to Core ATen here)."""
    try:
        exported = exported.run_decompositions(decomposition_table())
    except Exception as e:  # noqa: BLE001
        raise DopplerError(f"run_decompositions failed: {type(e).__name__}: "
                           f"{_first_lines(e)}") from e
    flat, spec = flatten_inputs(example_inputs, example_kwargs)
    in_spec = exported.call_spec.in_spec
    if in_spec is not None and spec is not None and spec != in_spec:
        raise DopplerError(
            f"the example inputs do not have the structure the ExportedProgram was "
            f"exported with: got {spec}, expected {in_spec}")
    signature = exported.graph_signature
    placeholders = [n for n in exported.graph_module.graph.nodes if n.op == "placeholder"]
    specs = signature.input_specs
    if len(specs) != len(placeholders):
        raise DopplerError("internal error: the graph signature does not match the graph's "
                           "placeholders")
    state, constants = exported.state_dict, exported.constants
    roles, values, params, buffers = [], [], [], []
    user = iter(range(len(flat)))
    for node, s in zip(placeholders, specs):
        kind = s.kind.name
        if kind == "USER_INPUT":
            index = next(user, None)
            if index is None:
                raise DopplerError("the ExportedProgram takes more inputs than were given")
            roles.append(("input", index))
            values.append(flat[index])
        elif kind == "PARAMETER":
            roles.append(("parameter", s.target))
            values.append(state[s.target])
            params.append(s.target)
        elif kind == "BUFFER":
            roles.append(("buffer", s.target))
            values.append(state[s.target] if s.target in state else constants[s.target])
            buffers.append(s.target)
        elif kind in ("CONSTANT_TENSOR", "CUSTOM_OBJ"):
            roles.append(("constant", s.target))
            values.append(constants[s.target])
        else:
            raise DopplerError(f"an ExportedProgram input of kind {kind} ({node.name}) is "
                               "not supported")
    if next(user, None) is not None:
        raise DopplerError(f"{len(flat)} example input tensors given; the ExportedProgram "
                           "takes fewer")
    _check_constraints(exported, placeholders, specs, flat)
    outputs = [i for i, s in enumerate(signature.output_specs) if s.kind.name == "USER_OUTPUT"]
    return Source(exported.graph_module, roles, values, out_spec=exported.call_spec.out_spec,
                  user_outputs=outputs, param_order=params, buffer_order=buffers,
                  origin="torch.export")


def _check_constraints(exported, placeholders, specs, flat):
    """The user inputs against the export's shapes and range constraints."""
    try:
        from torch._export.utils import _check_input_constraints_for_graph
    except ImportError:
        return
    nodes = [n for n, s in zip(placeholders, specs) if s.kind.name == "USER_INPUT"]
    with_path = [((), value) for value in flat]
    try:
        _check_input_constraints_for_graph(nodes, with_path, exported.range_constraints)
    except Exception as e:  # noqa: BLE001
        raise DopplerError(f"the example inputs do not satisfy the ExportedProgram's "
                           f"constraints: {_first_lines(e)}") from e


# -- torch.fx ------------------------------------------------------------------------


def trace(module, example_inputs=None):
    """A GraphModule for `module` (symbolic_trace unless it is one already).

    Inputs that are tuples, lists or dicts of tensors are traced as one
    placeholder per tensor (torch.fx's pytree concrete_args)."""
    if isinstance(module, torch.fx.GraphModule):
        return module
    if not isinstance(module, torch.nn.Module):
        raise DopplerError(f"expected a torch.nn.Module, torch.fx.GraphModule or "
                           f"ExportedProgram, got {type(module).__name__}")
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    # Buffers as get_attr proxies: `self.mask[:T, :T]` with a traced T then
    # traces (plain symbolic_trace slices the real tensor and fails).
    tracer.proxy_buffer_attributes = True
    try:
        graph = tracer.trace(module, concrete_args=_pytree_concrete_args(module,
                                                                         example_inputs))
    except DopplerError:
        raise
    except Exception as e:  # torch raises TraceError, TypeError, ...
        raise DopplerError(
            f"torch.fx.symbolic_trace failed on {type(module).__name__}: {e}. "
            "Write the model with indexing (x.size(0), parts[0]) rather than unpacking "
            "proxies, or pass a GraphModule (torch.export where available).") from e
    return torch.fx.GraphModule(tracer.root, graph, module.__class__.__name__)


def _structured(value):
    return isinstance(value, (tuple, list, dict))


def _pytree_concrete_args(module, example_inputs):
    """concrete_args flattening the structured inputs (None when there are none)."""
    if example_inputs is None or not any(_structured(v) for v in example_inputs):
        return None
    try:
        from torch.fx._symbolic_trace import PH
    except ImportError:
        raise DopplerError("inputs that are tuples, lists or dicts need torch.fx's pytree "
                           "support (torch 1.12+)") from None
    names = [p.name for p in inspect.signature(module.forward).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < len(example_inputs):
        raise DopplerError(f"forward takes {len(names)} positional input(s) but "
                           f"{len(example_inputs)} example input(s) were given")
    return {name: pytree.tree_map(lambda _: PH, value)
            for name, value in zip(names, example_inputs)}


def pytree_specs(gm):
    """(in_spec, out_spec) of a pytree-flattened fx graph, or (None, None)."""
    info = getattr(getattr(gm.graph, "_codegen", None), "pytree_info", None)
    if info is None:
        return None, None
    return info.in_spec, info.out_spec


def make_fx_fallback(module, example_inputs, traced):
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
        stacklevel=4)
    return gm


def from_graph_module(gm, example_inputs, original=None):
    """A Source for a GraphModule (parameters as get_attr nodes)."""
    flat, _ = flatten_inputs(example_inputs)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    in_spec, out_spec = pytree_specs(gm)
    if len(placeholders) != len(flat):
        raise DopplerError(f"forward takes {len(placeholders)} input(s) "
                           f"but {len(flat)} example input(s) were given")
    order = original if isinstance(original, torch.nn.Module) else gm
    params = [name for name, _ in order.named_parameters()]
    buffers = [name for name, _ in order.named_buffers()]
    run_args = list(example_inputs) if in_spec is not None else flat
    return Source(gm, [("input", i) for i in range(len(flat))], flat, run_args=run_args,
                  out_spec=out_spec, param_order=params, buffer_order=buffers)


def source_for(module, example_inputs, example_kwargs=None):
    """The Source of `module`: an ExportedProgram as is; an nn.Module through
    torch.export where torch has it (symbolic_trace, then make_fx, where
    export fails or torch is 1.x); a GraphModule as it is."""
    example_inputs = tuple(example_inputs)
    if is_exported_program(module):
        return from_exported(module, example_inputs, example_kwargs)
    if example_kwargs:
        if not has_export() or isinstance(module, torch.fx.GraphModule):
            raise DopplerError("keyword example inputs need torch.export (torch 2.6+) and "
                               "an nn.Module")
    if isinstance(module, torch.fx.GraphModule):
        return from_graph_module(module, example_inputs, module)
    if not isinstance(module, torch.nn.Module):
        raise DopplerError(f"expected a torch.nn.Module, torch.fx.GraphModule or "
                           f"ExportedProgram, got {type(module).__name__}")
    if has_export():
        try:
            exported = export_module(module, example_inputs, example_kwargs)
        except DopplerError as exported_error:
            try:
                gm = trace(module, example_inputs)
            except DopplerError:
                raise exported_error from None
            warnings.warn(f"{exported_error}; using torch.fx.symbolic_trace instead",
                          stacklevel=3)
            return from_graph_module(gm, example_inputs, module)
        return from_exported(exported, example_inputs, example_kwargs)
    try:
        gm = trace(module, example_inputs)
    except DopplerError as traced:
        if any(_structured(v) for v in example_inputs):
            raise
        gm = make_fx_fallback(module, example_inputs, traced)
    return from_graph_module(gm, example_inputs, module)

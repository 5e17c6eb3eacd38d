"""doppler.export, doppler.place, doppler.run."""

import json
import math
import numbers
import os
import re
import shutil
import struct
import subprocess
import tempfile

import torch

from .errors import DopplerError
from .frontend import import_module
from .tools import ToolError, find_tool, run_tool
from .host import resolve_system


def export(module, example_inputs):
    """Doppler-dialect MLIR text of `module`'s forward on `example_inputs`.

    `module`: a torch.nn.Module (torch 2.6+: exported with
    torch.export.export(strict=False) and decomposed to Core ATen; torch 1.x:
    traced with torch.fx.symbolic_trace, make_fx as the fallback), a
    torch.export ExportedProgram (decomposed), or a torch.fx.GraphModule (as
    it is). `example_inputs`: tensors, or tuples/lists/dicts of them. Shapes
    are static, those of the example inputs. The function's arguments are the
    user inputs and the values torch derives from integer inputs, then the
    parameters (named_parameters order), the buffers (named_buffers order)
    and the values folded from buffers (graph order); see
    `exported(...).arguments`.
    """
    return import_module(module, example_inputs).mlir


def exported(module, example_inputs):
    """The import itself (`Program`): text, argument specs and values, output structure."""
    return import_module(module, example_inputs)


_OPTION_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def pipeline_value(name, value):
    """`value` as MLIR pass-option text for option `name`: the one place
    values are put into a pipeline string. Booleans are true/false; a value
    with spaces, quotes or braces is quoted (MLIR's option syntax takes
    "..." or '...', without escapes); one holding both quote characters, or
    a control character, cannot be written and is an error."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise DopplerError(f"pipeline option {name}={value!r}: expected a string, number or "
                           f"bool, got {type(value).__name__}")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise DopplerError(f"pipeline option {name}={value!r}: control characters cannot be "
                           "passed to doppler-opt")
    if value and not any(c.isspace() or c in "\"'{}" for c in value):
        return value
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    raise DopplerError(f"pipeline option {name}={value!r}: a value holding both ' and \" "
                       "cannot be written in MLIR's pass-option syntax")


def _pipeline_spec(devices, system, policy, options):
    if isinstance(devices, bool) or not isinstance(devices, numbers.Integral) or devices < 1:
        raise DopplerError(f"devices={devices!r}: expected a positive integer")
    items = [("system", system), ("devices", int(devices)), ("policy", policy)]
    for key, value in options.items():
        if value is not None:
            items.append((key.replace("_", "-"), value))
    parts = []
    for name, value in items:
        if not _OPTION_NAME.match(name):
            raise DopplerError(f"pipeline option name {name!r} is not an option name")
        parts.append(f"{name}={pipeline_value(name, value)}")
    return " ".join(parts)


_LOC = re.compile(r'loc\((.*)\)\s*$')
_DEVICE = re.compile(r'doppler\.device = #doppler\.device<(\d+)>')
_MAKESPAN = re.compile(r'doppler\.makespan = ([-+0-9.eE]+|inf|nan)')
_OPNAME = re.compile(r'^\s*(?:%[\w.$-]+(?::\d+)?(?:,\s*%[\w.$-]+)*\s*=\s*)?"?([\w.]+)"?')


class Placement:
    """A placed program and where each FX node runs.

    `devices`: FX node name -> the device of the op that produces the
    node's value (the last op, in program order, that carries the node's
    location: after decomposition, usually the assemble of its blocks;
    transfers excluded). Nodes that emit no op of their own (views such as
    transpose or unsqueeze, getitem of a split) report the device of the
    node whose op produced their value. Inputs, parameters and folded
    constants report None (arguments live wherever they are used).
    `device_sets`: FX node name -> every device that runs part of it.
    `makespan`: the predicted makespan (microseconds, the function's
    doppler.makespan). `mlir`: the placed program, with locations.
    `remark`: doppler-place's summary line (lower bound, load per device).
    `budget`: doppler-place's budget line (the learned greedy placement's
    and the heuristics' makespans side by side, and what refinement made of
    the best), or None when no budget was spent (budget_evaluations=0, or
    a heuristic policy without a budget).
    """

    def __init__(self, program, mlir, remark, devices, system, policy, budget=None):
        self.program = program
        self.mlir = mlir
        self.remark = remark
        self.budget = budget
        self.num_devices = devices
        self.system = system
        self.policy = policy
        self.graph_module = program.graph_module
        self.ops_per_device = [0] * devices
        self.devices, self.device_sets = self._map_nodes()
        found = _MAKESPAN.search(mlir)
        if not found:
            raise DopplerError("the placed program has no doppler.makespan")
        self.makespan = float(found.group(1))
        for node in self.graph_module.graph.nodes:
            node.meta["doppler_device"] = self.devices.get(node.name)
            node.meta["doppler_devices"] = sorted(self.device_sets.get(node.name, ()))

    def _map_nodes(self):
        last, every = {}, {}
        for line in self.mlir.splitlines():
            device = _DEVICE.search(line)
            loc = _LOC.search(line)
            if not device or not loc:
                continue
            op = _OPNAME.match(line)
            if op and op.group(1) in ("doppler.transfer", "func.func", "func.return"):
                continue
            d = int(device.group(1))
            if d < len(self.ops_per_device):
                self.ops_per_device[d] += 1
            for name in re.findall(r'"([^"]*)"', loc.group(1)):
                last[name] = d
                every.setdefault(name, set()).add(d)
        devices, sets = {}, {}
        for node in self.graph_module.graph.nodes:
            owner = self.program.node_owner.get(node.name)
            devices[node.name] = last.get(owner) if owner else None
            sets[node.name] = set(every.get(owner, ())) if owner else set()
        return devices, sets

    def gantt_svg(self, path):
        """Writes the simulated schedule as an SVG Gantt chart (doppler-translate)."""
        return self._translate("--export-svg-gantt", path)

    def chrome_trace(self, path):
        """Writes the simulated schedule as a Chrome trace (open in ui.perfetto.dev)."""
        return self._translate("--export-chrome-trace", path)

    def _translate(self, flag, path):
        with tempfile.TemporaryDirectory(prefix="doppler-") as tmp:
            placed = os.path.join(tmp, "placed.mlir")
            with open(placed, "w") as f:
                f.write(self.mlir)
            run_tool("doppler-translate", [flag, placed, "-o", path])
        return path

    def summary(self):
        gm = self.graph_module
        lines = [f"Doppler placement of {type(gm).__name__} on {self.num_devices} devices "
                 f"(system {self.system}, policy {self.policy})",
                 f"predicted makespan: {self.makespan:.3f} us"]
        if self.remark:
            lines.append(self.remark)
        if self.budget:
            lines.append(self.budget)
        lines.append("ops per device: " + ", ".join(
            f"{d}: {n}" for d, n in enumerate(self.ops_per_device)))
        rows = [("node", "op", "shape", "device", "all devices")]
        for node in gm.graph.nodes:
            if node.op in ("output",):
                continue
            meta = node.meta.get("tensor_meta")
            shape = list(meta.shape) if hasattr(meta, "shape") else ""
            target = node.target if isinstance(node.target, str) else \
                getattr(node.target, "__name__", str(node.target))
            if node.op == "call_module":
                target = type(gm.get_submodule(node.target)).__name__
            device = self.devices.get(node.name)
            every = sorted(self.device_sets.get(node.name, ()))
            rows.append((node.name, f"{node.op}:{target}" if node.op == "get_attr" else
                         str(target), str(shape), "-" if device is None else str(device),
                         ",".join(map(str, every)) or "-"))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        return "\n".join(lines)

    __str__ = summary

    def __repr__(self):
        return (f"<Placement of {type(self.graph_module).__name__}: {self.num_devices} devices, "
                f"makespan {self.makespan:.3f} us>")


def place(module, example_inputs, devices=4, system="h100x4", policy="doppler",
          **pipeline_options):
    """Exports `module`, runs doppler-opt --doppler-pipeline, returns a Placement.

    Other doppler-pipeline options pass through, underscores for dashes
    (parts="auto" or a block count, samples=0, model=FILE, seed=0,
    budget_evaluations=-1: the
    default budget, 0: the greedy pass alone; budget_ms=0). The devices are also written to
    `node.meta["doppler_device"]` (and the sets to "doppler_devices") of the
    GraphModule (the one given, or the one traced from the module:
    `placement.graph_module`).
    """
    program = import_module(module, example_inputs)
    return _place_program(program, devices, system, policy, pipeline_options)


def _place_program(program, devices, system, policy, options):
    spec = _pipeline_spec(devices, system, policy, options)
    with tempfile.TemporaryDirectory(prefix="doppler-") as tmp:
        source = os.path.join(tmp, "program.mlir")
        placed = os.path.join(tmp, "placed.mlir")
        with open(source, "w") as f:
            f.write(program.mlir)
        stderr = run_tool("doppler-opt", [source, f"--doppler-pipeline={spec}",
                                          "--mlir-print-debuginfo", "--mlir-print-local-scope",
                                          "-o", placed], stderr=True)
        with open(placed) as f:
            text = f.read()
    # The placement summary ("placed N ops on D devices ...") and the budget
    # line ("budget: doppler greedy ..."), not other remarks.
    remark, budget = "", None
    for line in stderr.splitlines():
        if "remark: placed " in line:
            remark = line.split("remark: ", 1)[1]
        elif "remark: budget: " in line:
            budget = line.split("remark: ", 1)[1]
    return Placement(program, text, remark, int(devices), system, policy, budget)


class RunResult:
    """What doppler.run returns.

    `outputs`: forward's result (same structure as `module(*inputs)`),
    torch tensors read back from the runtime. `measured_makespan` and
    `predicted_makespan`: microseconds (the median of `repeat` runs, and
    the simulator's). `placement`: the Placement that ran. `report`:
    doppler-run's JSON report. `max_rel_error`: with check=True, the largest
    relative error of the runtime's outputs against the reference
    interpreter on the same arguments.
    """

    def __init__(self, outputs, report, placement):
        self.outputs = outputs
        self.report = report
        self.placement = placement
        self.measured_makespan = float(report["measured_makespan_s"]) * 1e6
        predicted = report.get("predicted_makespan_s")
        self.predicted_makespan = float(predicted) * 1e6 if predicted is not None \
            else placement.makespan
        self.max_rel_error = report.get("max_rel_error")

    def __repr__(self):
        return (f"<RunResult: measured {self.measured_makespan:.1f} us, "
                f"predicted {self.predicted_makespan:.1f} us>")


def _tensor_json(tensor):
    tensor = tensor.detach().cpu().contiguous()
    dtype = _BINARY_TYPES[tensor.dtype]
    if not tensor.dtype.is_floating_point:  # i32/i64 gather indices: exact
        return {"type": dtype, "shape": list(tensor.shape), "data": tensor.reshape(-1).tolist()}
    data = []
    for value in tensor.reshape(-1).double().tolist():
        if math.isfinite(value):
            data.append(value)
        else:
            data.append("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    return {"type": dtype, "shape": list(tensor.shape), "data": data}


# The binary tensor file doppler-run reads and writes (runtime/lib/TensorFile.h):
# magic, the header's length (8 bytes, little-endian), a JSON header naming
# each tensor's type and shape, then the tensors' bytes in order.
_MAGIC = b"DPLRTNS1"
_BINARY_TYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
                 torch.int32: "i32", torch.int64: "i64"}


def _write_binary(tensors, path):
    tensors = [t.detach().cpu().contiguous() for t in tensors]
    for t in tensors:
        if t.dtype not in _BINARY_TYPES:
            raise DopplerError(f"cannot write a {t.dtype} tensor for doppler-run")
    header = json.dumps({"format": "doppler-tensors", "version": 1,
                         "tensors": [{"type": _BINARY_TYPES[t.dtype], "shape": list(t.shape)}
                                     for t in tensors]}).encode()
    with open(path, "wb") as f:
        f.write(_MAGIC)
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for t in tensors:
            f.write(t.numpy().tobytes())


def _read_binary(data, path):
    (length,) = struct.unpack_from("<Q", data, len(_MAGIC))
    start = len(_MAGIC) + 8
    header = json.loads(data[start:start + length])
    names = {name: dtype for dtype, name in _BINARY_TYPES.items()}
    offset = start + length
    tensors = []
    for entry in header["tensors"]:
        dtype = names[entry["type"]]
        count = math.prod(entry["shape"])
        size = count * torch.empty((), dtype=dtype).element_size()
        if offset + size > len(data):
            raise DopplerError(f"{path}: truncated tensor file")
        chunk = bytearray(data[offset:offset + size])
        tensors.append(torch.frombuffer(chunk, dtype=dtype, count=count)
                       .reshape(entry["shape"]) if count else
                       torch.empty(entry["shape"], dtype=dtype))
        offset += size
    return tensors


def write_arguments(program, path):
    """Writes the program's argument values in doppler-run's --arguments
    format: the binary tensor file when `path` ends in ".bin" (what
    doppler.run uses: a model's weights as raw bytes), JSON otherwise."""
    if path.endswith(".bin"):
        _write_binary([a.tensor for a in program.arguments], path)
        return
    with open(path, "w") as f:
        f.write('{"format": "doppler-outputs", "version": 1, "outputs": [')
        for i, a in enumerate(program.arguments):
            if i:
                f.write(", ")
            _write_tensor(f, a.tensor)
        f.write("]}")


# Significant digits that round-trip each type.
_DIGITS = {torch.float32: 9, torch.float64: 17, torch.float16: 5}


def _write_tensor(f, tensor):
    """One tensor as JSON; finite values through numpy's C formatting (the
    weights of a real model are millions of values), others one by one."""
    tensor = tensor.detach().cpu().contiguous()
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is None or not tensor.dtype.is_floating_point \
            or not bool(torch.isfinite(tensor).all()) or tensor.numel() == 0:
        json.dump(_tensor_json(tensor), f)
        return
    dtype = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16"}[tensor.dtype]
    f.write(f'{{"type": "{dtype}", "shape": {json.dumps(list(tensor.shape))}, "data": [')
    f.flush()
    tensor.reshape(-1).numpy().tofile(f, sep=",", format=f"%.{_DIGITS[tensor.dtype]}g")
    f.write("]}")


_TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
                 "i32": torch.int32, "i64": torch.int64}


def read_outputs(path):
    """The tensors of a doppler-run --write-outputs file (binary or JSON)."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(_MAGIC):
        return _read_binary(data, path)
    root = json.loads(data)
    tensors = []
    for entry in root["outputs"]:
        if entry["type"] in ("i32", "i64"):
            tensors.append(torch.tensor(entry["data"], dtype=_TORCH_DTYPES[entry["type"]])
                           .reshape(entry["shape"]))
            continue
        data = [float(v) for v in entry["data"]]
        tensors.append(torch.tensor(data, dtype=torch.float64)
                       .reshape(entry["shape"]).to(_TORCH_DTYPES[entry["type"]]))
    return tensors


def run(module, example_inputs, devices=4, system="host", backend="cpu", policy="doppler",
        repeat=3, check=False, nodes=None, **pipeline_options):
    """Places `module` and runs it on Doppler's runtime (doppler-run) on `example_inputs`.

    `system="host"` (the default) places for this machine: the description
    doppler-calibrate measures of it for `devices` CPU devices, once, cached
    (doppler.host); a preset name or a JSON file places for that system
    instead (what-if placement).

    The inputs, parameters and buffers are fed to doppler-run (--arguments),
    the outputs read back (--write-outputs). check=True also compares the
    runtime's outputs with the reference interpreter's (doppler-run --check;
    result in `max_rel_error`).

    `nodes=R` runs the placed program in R processes (MPI ranks, node i on
    rank i) that `mpirun -np R --oversubscribe` starts, as root too
    (runtime/README.md, "Across processes (MPI)"): the devices of each node
    of `system` (a description with nodes, e.g. doppler-calibrate's under
    mpirun), else `devices / R` contiguous devices per rank. The result is
    as in one process; rank 0 reports.
    """
    program = import_module(module, example_inputs)
    return run_program(program, devices, system, backend, policy, repeat, check,
                       nodes=nodes, **pipeline_options)


def _run_doppler(command, nodes):
    """doppler-run's standard output, in one process or on `nodes` MPI ranks."""
    if nodes is None:
        return run_tool("doppler-run", command)
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise DopplerError(f"nodes={nodes} needs mpirun (Open MPI, e.g. Debian's "
                           "openmpi-bin) on PATH")
    line = [mpirun, "-np", str(int(nodes)), "--oversubscribe", "--bind-to", "none",
            find_tool("doppler-run")] + [str(a) for a in command]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(line, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise ToolError(f"doppler-run on {nodes} ranks failed with exit status "
                        f"{done.returncode}", line, done.stdout, done.stderr)
    return done.stdout


def run_program(program, devices=4, system="host", backend="cpu", policy="doppler", repeat=3,
                check=False, nodes=None, **pipeline_options):
    """doppler.run on an imported Program (`doppler.exported(...)`)."""
    if nodes is not None and (isinstance(nodes, bool) or
                              not isinstance(nodes, numbers.Integral) or nodes < 1):
        raise DopplerError(f"nodes: expected a positive number of ranks, got {nodes!r}")
    system = resolve_system(system, devices, backend)
    placement = _place_program(program, devices, system, policy, pipeline_options)
    with tempfile.TemporaryDirectory(prefix="doppler-") as tmp:
        placed = os.path.join(tmp, "placed.mlir")
        args = os.path.join(tmp, "arguments.bin")
        outs = os.path.join(tmp, "outputs.bin")
        with open(placed, "w") as f:
            f.write(placement.mlir)
        write_arguments(program, args)
        command = [placed, "--backend", backend, "--devices", str(int(devices)),
                   "--arguments", args, "--write-outputs", outs, "--json",
                   "--repeat", str(int(repeat))]
        if check:
            command += ["--check", "--tolerance", "1e300"]  # report, never fail
        report = json.loads(_run_doppler(command, nodes))
        results = read_outputs(outs)
    return RunResult(program.unflatten(results), report, placement)

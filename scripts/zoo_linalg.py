#!/usr/bin/env python3
"""The model zoo through torch-mlir to linalg on tensors, then
`convert-linalg-to-doppler`: what converts and what is left, per model.

Each model of python/doppler/zoo.py (or the ones named) is built (random
weights, small configuration, seed 0), exported with `torch.export`
(non-strict), decomposed with torch-mlir's decomposition table and imported
to MLIR's linalg on tensors by PyPI torch-mlir
(`torch_mlir.fx.export_and_import(..., output_type="linalg-on-tensors")`),
then run through `doppler-opt --convert-linalg-to-doppler=full=true,report=true`.
Reported per model: the linalg and tensor ops that come in, the ops converted,
the doppler ops that come out, what is left by name (and why), and times.

    scripts/setup_torch_mlir.sh                      # once: build/torch-mlir-venv
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
      build/torch-mlir-venv/bin/python scripts/zoo_linalg.py            # every model
    build/torch-mlir-venv/bin/python scripts/zoo_linalg.py gpt2 bert    # some
    build/torch-mlir-venv/bin/python scripts/zoo_linalg.py --table docs/zoo.md

`--table FILE` writes (or replaces) the section "## The linalg route
(torch-mlir)" of FILE; the same Markdown goes to stdout. The MLIR files land
in --out (default build/zoo-linalg: NAME.linalg.mlir, NAME.doppler.mlir).

How the MLIR gets from torch-mlir to doppler-opt: torch-mlir's wheel carries
its own (newer) MLIR, so the module is printed in the generic op form (no
custom assembly to disagree on) and doppler-opt (MLIR 22) reads it with
--allow-unregistered-dialect (torch-mlir's `tm_tensor` ops, which doppler-opt
does not register, stay as unregistered ops and are listed as left). The
`cf.assert` bounds checks torch-mlir puts into gather bodies are erased
before printing (runtime checks, no values; doppler-opt has no `cf`).
Parameters are handed over as function arguments (as Doppler's frontend does:
weights are placed like any value), buffers stay constants as torch-mlir
freezes them; `--frozen` keeps the parameters as constants too (what
`export_and_import(model, *args)` gives: large dense_resource blobs).

Exit status: 0 when every model imported and converted with nothing left,
1 otherwise (the table says what).
"""

import argparse
import collections
import os
import platform
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

SECTION = "## The linalg route (torch-mlir)"

# Top-level ops counted as "coming in" (tensor.empty only gives shapes).
_NOT_COUNTED = {"tensor.empty"}
# Top-level ops that are neither compute nor left over after conversion.
_STRUCTURAL = {"func.func", "func.return", "tensor.empty", "arith.constant", "builtin.module"}

_OP_LINE = re.compile(r'^(\s*)(?:%[^=]+=\s*)?"([A-Za-z_][\w$]*\.[\w.$]+)"\(')
_CUSTOM_OP = re.compile(r'^\s*(?:%[\w.$#:-]+(?:,\s*%[\w.$#:-]+)*\s*=\s*)?"?([a-z_]+\.[\w.]+)"?')


# -- import ---------------------------------------------------------------------------


def import_to_linalg(model, inputs, frozen=False):
    """(generic-form MLIR text of linalg on tensors, seconds) of `model` on
    `inputs` through torch-mlir's FX importer."""
    import torch
    from torch_mlir import fx

    start = time.perf_counter()
    # torch-mlir's import_frozen_program looks buffers up in the program's
    # state_dict only; torch.export puts non-persistent buffers (Hugging
    # Face's position_ids, token_type_ids, RoPE's inv_freq) in `constants`:
    # "AssertionError: Could not find state mapping for buffer". Made
    # persistent, they land in the state_dict (same values).
    for submodule in model.modules():
        submodule._non_persistent_buffers_set.clear()
    if frozen:
        program, arguments = model, tuple(inputs)
    else:
        names = [n for n, _ in model.named_parameters()]
        params = dict(model.named_parameters())
        count = len(inputs)

        class Functional(torch.nn.Module):
            """The model with its parameters as arguments after the inputs."""

            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                weights = dict(zip(names, args[count:]))
                return torch.func.functional_call(self.model, weights, tuple(args[:count]),
                                                  strict=False)

        program = Functional()
        arguments = tuple(inputs) + tuple(params[n].detach() for n in names)
    with torch.no_grad():
        module = fx.export_and_import(program, *arguments, output_type="linalg-on-tensors")
    from torch_mlir import ir
    asserts = []

    def collect(op):
        if op.name == "cf.assert":
            asserts.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    for op in asserts:
        op.erase()
    text = module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None)
    # The model source line of each top-level op (torch-mlir keeps the FX
    # node's stack as a callsite location), in the order they are printed.
    sources = [source_of(str(op.location))
               for func in module.body.operations if func.operation.name == "func.func"
               for op in func.regions[0].blocks[0].operations]
    return text, time.perf_counter() - start, len(asserts), sources


_FRAME = re.compile(r'"([^"]+)":(\d+):\d+')


def source_of(location):
    """`file:line` of the innermost frame of an op's callsite location,
    with the first frame in torchvision or transformers if that is another
    one ("" without a location)."""
    frames = [(f, int(n)) for f, n in _FRAME.findall(location)]
    if not frames:
        return ""

    def short(frame):
        path, line = frame
        path = path.split("site-packages/", 1)[-1]
        return f"{path}:{line}"

    text = short(frames[0])
    model = next((f for f in frames if "/transformers/" in f[0] or "/torchvision/" in f[0]),
                 None)
    if model and model != frames[0]:
        text += f" (from {short(model)})"
    return text


# -- reading the IR -------------------------------------------------------------------


def top_level_ops(text):
    """The ops of the function bodies of a generic-form text: dicts with
    line (1-based), name, body (names of the ops in its regions) and
    signature (its `(operand types) -> result types`)."""
    ops = []
    lines = text.splitlines()
    depth_indent = None
    current = None
    for number, line in enumerate(lines, 1):
        match = _OP_LINE.match(line)
        if match:
            indent = len(match.group(1))
            if depth_indent is None and match.group(2) not in ("builtin.module", "func.func"):
                depth_indent = indent
            if indent == depth_indent:
                current = {"line": number, "name": match.group(2), "body": [],
                           "signature": _signature(line)}
                ops.append(current)
                continue
            if current is not None and indent > depth_indent:
                current["body"].append(match.group(2))
                continue
        if current is not None and depth_indent is not None and \
                line.startswith(" " * depth_indent + "})"):
            current["signature"] = _signature(line)
    return ops


def _signature(line):
    match = re.search(r'\)\s*:\s*(\(.*\)\s*->\s*.*)$', line)
    return match.group(1) if match else ""


def _result_types(signature):
    return signature.split("->", 1)[1].strip() if "->" in signature else ""


def _element_types(types):
    return re.findall(r'tensor<(?:[\d?]+x)*([a-z]\w*)>', types)


def what_it_is(op):
    """A short description of a top-level op that convert-linalg-to-doppler
    left: what it computes, from its body and its element types."""
    name, body, sig = op["name"], op["body"], op["signature"]
    results = _element_types(_result_types(sig))
    operands = _element_types(sig.split("->", 1)[0])
    if name.startswith("tm_tensor."):
        return f"{name}: torch-mlir's TMTensor dialect, not linalg"
    if not name.startswith(("linalg.", "tensor.")):
        return f"{name}: not linalg"
    types = f"{'/'.join(sorted(set(operands))) or '-'} -> {'/'.join(sorted(set(results)))}"
    body = [b for b in body if b != "linalg.yield"]
    integer = [b for b in body if b in _INTEGER_ARITH]
    casts = [b for b in body if b in _CASTS]
    if "tensor.extract" in body:
        what = ("gather of floats (embedding, index_select, as_strided)"
                if results and results[0].startswith("f")
                else "gather of integers (index arithmetic on position or mask tensors)")
    elif "math.erf" in body:
        what = "exact erf (erf GELU)"
    elif "arith.cmpf" in body:
        what = "float comparison into an i1 mask"
    elif "arith.cmpi" in body:
        what = "integer comparison into an i1 mask"
    elif "arith.select" in body:
        what = "select on an i1 mask (where)"
    elif integer:
        what = f"integer/boolean arithmetic ({', '.join(sorted(set(integer)))})"
    elif "linalg.index" in body:
        what = "iota / index arithmetic (linalg.index)"
    elif casts:
        what = f"element type cast at tensor level ({', '.join(sorted(set(casts)))})"
    elif name == "linalg.fill":
        what = "fill"
    elif not body:
        what = "copy or broadcast"
    else:
        what = f"body {', '.join(sorted(set(body)))}"
    return f"{name}: {what}, {types}"


_INTEGER_ARITH = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui",
                  "arith.remsi", "arith.remui", "arith.andi", "arith.ori", "arith.xori",
                  "arith.maxsi", "arith.minsi", "arith.shli", "arith.shrsi", "arith.shrui",
                  "arith.floordivsi", "arith.ceildivsi"}
_CASTS = {"arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi",
          "arith.fptoui", "arith.extui", "arith.extsi", "arith.trunci", "arith.index_cast",
          "arith.bitcast"}


def counts(ops, names=None, exclude=()):
    c = collections.Counter(o["name"] for o in ops
                            if (names is None or o["name"].startswith(names))
                            and o["name"] not in exclude)
    return c


def custom_ops(text):
    """Top-level op names of doppler-opt's (custom form) output."""
    found = (_CUSTOM_OP.match(line) for line in text.splitlines())
    return collections.Counter(m.group(1) for m in found if m)


# -- one model ------------------------------------------------------------------------


class Row:
    def __init__(self, name):
        self.name = name
        self.linalg_in = collections.Counter()  # linalg/tensor ops coming in
        self.converted = None                   # ops converted (doppler-opt's remark)
        self.doppler_out = collections.Counter()
        self.left = collections.Counter()       # "op: what it is" -> count
        self.left_reasons = collections.Counter()  # doppler-opt's own reasons
        self.other_left = collections.Counter()    # non-linalg ops left (unregistered, ...)
        self.left_sources = collections.defaultdict(collections.Counter)  # what -> source
        self.asserts = 0
        self.import_s = None
        self.convert_s = None
        self.rel_error = None
        self.run_s = None
        self.run_error = None
        self.error = None


def convert(row, text, out, doppler_opt, sources=None):
    linalg_path = os.path.join(out, row.name + ".linalg.mlir")
    doppler_path = os.path.join(out, row.name + ".doppler.mlir")
    with open(linalg_path, "w") as f:
        f.write(text)
    ops = top_level_ops(text)
    if sources and len(sources) == len(ops):
        for op, source in zip(ops, sources):
            op["source"] = source
    row.linalg_in = counts(ops, ("linalg.", "tensor."), _NOT_COUNTED)
    by_line = {o["line"]: o for o in ops}
    start = time.perf_counter()
    # report=true names the reason on each op left; full=true makes each an
    # error (the status says whether anything was left). Run report first,
    # as full=true writes no output.
    done = subprocess.run([doppler_opt, linalg_path, "-o", doppler_path,
                           "--allow-unregistered-dialect",
                           "--convert-linalg-to-doppler=report=true"],
                          capture_output=True, text=True)
    full = subprocess.run([doppler_opt, linalg_path, "-o", os.devnull,
                           "--allow-unregistered-dialect",
                           "--convert-linalg-to-doppler=full=true"],
                          capture_output=True, text=True)
    row.convert_s = time.perf_counter() - start
    if done.returncode != 0:
        row.error = _first_error(done.stderr)
        return
    for line in done.stderr.splitlines():
        match = re.match(r'.*?:(\d+):\d+: remark: left as is: (.*)', line)
        if match:
            op = by_line.get(int(match.group(1)))
            what = what_it_is(op) if op else "?"
            row.left[what] += 1
            row.left_reasons[(what, match.group(2))] += 1
            if op and op.get("source"):
                row.left_sources[what][op["source"]] += 1
        match = re.search(r'remark: converted (\d+) op\(s\)', line)
        if match:
            row.converted = (row.converted or 0) + int(match.group(1))
    result = open(doppler_path).read()
    out_ops = custom_ops(result)
    row.doppler_out = collections.Counter({k: v for k, v in out_ops.items()
                                           if k.startswith("doppler.")})
    for name, count in out_ops.items():
        if name.startswith(("doppler.", "linalg.", "tensor.")) or name in _STRUCTURAL:
            continue
        if name.startswith(("arith.", "math.")):
            continue  # scalar constants and body ops of what is left
        row.other_left[name] += count
    for o in ops:
        if o["name"] in row.other_left:
            row.left[what_it_is(o)] += 1
            if o.get("source"):
                row.left_sources[what_it_is(o)][o["source"]] += 1
    if full.returncode == 0 and (row.left or row.other_left):
        row.error = "full=true passed with ops left"


# -- running the converted program -------------------------------------------------------

_CONSTANT_LINE = re.compile(
    r'^\s*(%[\w.$-]+) = arith\.constant (dense(?:_resource)?<.*>) : (tensor<[^>]*>)\s*$')
_RESOURCE = re.compile(r'^\s*([\w.$-]+): "0x([0-9A-Fa-f]*)",?\s*$')
_NUMPY_TYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "i64": "int64",
                "i32": "int32"}


def hoist_constants(text):
    """(text, [(shape, element type, numpy array)]): the function's tensor
    constants (torch-mlir's frozen buffers, the conversion's folded
    constants) made arguments after the others, with their values, since
    doppler-run takes tensors as arguments only (as the frontend's folded
    constants are)."""
    import numpy as np
    from torch_mlir import ir
    resources = {}
    for line in text.splitlines():
        match = _RESOURCE.match(line)
        if match:
            resources[match.group(1)] = bytes.fromhex(match.group(2))
    kept, hoisted = [], []
    for line in text.splitlines():
        match = _CONSTANT_LINE.match(line)
        if not match:
            kept.append(line)
            continue
        name, attr, type_text = match.groups()
        dims = type_text[len("tensor<"):-1].split("x")
        shape, element = [int(d) for d in dims[:-1]], dims[-1]
        if element not in _NUMPY_TYPES:
            raise ValueError(f"a {element} constant is left ({name}): doppler-run takes "
                             f"{', '.join(_NUMPY_TYPES)} tensors")
        if attr.startswith("dense_resource<"):
            blob = resources[attr[len("dense_resource<"):-1]]
            value = np.frombuffer(blob[4:], dtype=_NUMPY_TYPES[element]).copy()
        else:
            with ir.Context():
                value = np.array(ir.DenseElementsAttr(ir.Attribute.parse(
                    f"{attr} : {type_text}")))
            value = np.broadcast_to(value, shape).astype(_NUMPY_TYPES[element])
        hoisted.append((name, type_text, value.reshape(shape)))
    text = "\n".join(kept)
    if hoisted:
        head = re.search(r'func\.func @\w+\(', text)
        depth, i = 1, head.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        extra = ", ".join(f"{n}: {t}" for n, t, _ in hoisted)
        sep = ", " if text[head.end():i - 1].strip() else ""
        text = text[:i - 1] + sep + extra + text[i - 1:]
    return text, [v for _, _, v in hoisted]


def run_converted(row, model, inputs, params, doppler_path, doppler_opt, out):
    """Places the converted program on 4 cpu4 devices (doppler-pipeline), runs
    it with doppler-run on the model's inputs, parameters and the hoisted
    constants, and compares with PyTorch eager (row.rel_error: max |out -
    ref| / max |ref|, as the zoo's doppler.run check)."""
    import json
    import torch
    from doppler import api, zoo
    start = time.perf_counter()
    text, constants = hoist_constants(open(doppler_path).read())
    base = os.path.join(out, row.name)
    with open(base + ".run.mlir", "w") as f:
        f.write(text)
    spec = api._pipeline_spec(4, "cpu4", "doppler", {})
    bin_dir = os.path.dirname(doppler_opt)
    placed = subprocess.run([doppler_opt, base + ".run.mlir", f"--doppler-pipeline={spec}",
                             "-o", base + ".placed.mlir"], capture_output=True, text=True)
    if placed.returncode != 0:
        raise RuntimeError(f"doppler-pipeline: {_first_error(placed.stderr)}")
    arguments = list(inputs) + list(params) + [torch.from_numpy(c) for c in constants]
    api._write_binary(arguments, base + ".arguments.bin")
    ran = subprocess.run([os.path.join(bin_dir, "doppler-run"), base + ".placed.mlir",
                          "--backend", "cpu", "--devices", "4", "--arguments",
                          base + ".arguments.bin", "--write-outputs", base + ".outputs.bin",
                          "--json", "--repeat", "1"], capture_output=True, text=True)
    if ran.returncode != 0:
        raise RuntimeError(f"doppler-run: {_first_error(ran.stderr)}")
    json.loads(ran.stdout)
    outputs = api.read_outputs(base + ".outputs.bin")
    with torch.no_grad():
        expected = zoo.leaves(model(*inputs))
    row.rel_error = zoo.relative_error(outputs, expected)
    row.run_s = time.perf_counter() - start


def _first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:200]
    return stderr.strip()[:200]


def check(name, out, doppler_opt, frozen=False, run=False):
    from doppler import zoo
    row = Row(name)
    try:
        model, inputs = zoo.build(name)
        text, row.import_s, row.asserts, sources = import_to_linalg(model, inputs,
                                                                    frozen=frozen)
    except Exception as e:  # noqa: BLE001: the table says what failed
        row.error = f"import: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        return row
    convert(row, text, out, doppler_opt, sources)
    if run and not row.error and not row.left:
        # zoo.build again: the import changed the model's buffer bookkeeping.
        model, inputs = zoo.build(name)
        params = [] if frozen else [p.detach() for _, p in model.named_parameters()]
        try:
            run_converted(row, model, inputs, params,
                          os.path.join(out, name + ".doppler.mlir"), doppler_opt, out)
        except Exception as e:  # noqa: BLE001: the table says what failed
            row.run_error = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return row


def other_masks(name, out, doppler_opt):
    """The masks a converted program takes as data: `name` (an encoder of the
    zoo taking (input_ids, attention_mask)) imported and converted once, then
    run by doppler-run with the zoo's padded mask and with another one
    (padding in the middle of the first row, none in the others; the ids
    there set to the pad token, so that RoBERTa's positions change too),
    each against PyTorch eager on the same inputs. Returns [(rel. error,
    outputs)] for the two runs."""
    import torch
    from doppler import api, zoo
    model, inputs = zoo.build(name)
    text, _, _, sources = import_to_linalg(model, inputs)
    row = Row(name)
    convert(row, text, out, doppler_opt, sources)
    if row.error or row.left:
        raise RuntimeError(f"{name}: {row.error or dict(row.left)}")
    ids, mask = inputs
    mask2 = torch.ones_like(mask)
    mask2[0, 1:4] = 0
    ids2 = ids.clone()
    ids2[mask2 == 0] = getattr(model.config, "pad_token_id", None) or 0
    results = []
    for given in ((ids, mask), (ids2, mask2)):
        model, _ = zoo.build(name)
        params = [p.detach() for _, p in model.named_parameters()]
        run_converted(row, model, given, params, os.path.join(out, name + ".doppler.mlir"),
                      doppler_opt, out)
        results.append((row.rel_error,
                        api.read_outputs(os.path.join(out, name + ".outputs.bin"))))
    return results


# -- the table ------------------------------------------------------------------------


def _short_name(name):
    return name.split(".", 1)[1] if name.startswith(("linalg.", "doppler.")) else name


def _counter_text(c):
    total = sum(c.values())
    if not total:
        return "0"
    return f"{total} ({', '.join(f'{_short_name(k)} {v}' for k, v in sorted(c.items()))})"


def _left_total(row):
    return sum(row.left.values())


def table(rows):
    lines = ["| model | linalg/tensor ops in | converted | doppler ops out | left | import s "
             "| convert s | rel. error | run s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.error and r.converted is None:
            lines.append(f"| {r.name} | {_counter_text(r.linalg_in) if r.linalg_in else '-'} "
                         f"| - | - | error: {r.error.replace('|', '/')} | "
                         f"{_secs(r.import_s)} | {_secs(r.convert_s)} | - | - |")
            continue
        left = collections.Counter()
        for what, count in r.left.items():
            left[what.split(":", 1)[0]] += count
        if r.run_error:
            error = f"run failed: {r.run_error.replace('|', '/')}"
        else:
            error = f"{r.rel_error:.1e}" if r.rel_error is not None else "-"
        lines.append(f"| {r.name} | {_counter_text(r.linalg_in)} | {r.converted} | "
                     f"{_counter_text(r.doppler_out)} | {_counter_text(left)} | "
                     f"{_secs(r.import_s)} | {_secs(r.convert_s)} | {error} | "
                     f"{_secs(r.run_s)} |")
    return "\n".join(lines)


def _secs(s):
    return f"{s:.1f}" if s is not None else "-"


def left_list(rows):
    """What is left, per model, by what it is (and doppler-opt's reason)."""
    lines = []
    for r in rows:
        if not r.left:
            if not r.error:
                lines.append(f"- **{r.name}**: nothing left.")
            continue
        lines.append(f"- **{r.name}** ({_left_total(r)} left):")
        for what, count in sorted(r.left.items(), key=lambda kv: (-kv[1], kv[0])):
            reasons = sorted({reason for (w, reason) in r.left_reasons if w == what})
            why = f" (doppler-opt: {'; '.join(reasons)})" if reasons else ""
            sources = r.left_sources.get(what)
            if sources:
                shown = [s for s, _ in sources.most_common(2)]
                more = f" and {len(sources) - 2} more" if len(sources) > 2 else ""
                why += f"; at {'; '.join(shown)}{more}"
            lines.append(f"  - {count} x {what}{why}")
    return "\n".join(lines)


# Where each kind of op left comes from in the zoo, and why it stays (the
# first matching key of the op's description).
WHY = [
    ("tm_tensor.scan", "`aten.cumsum` of data (RoBERTa's position ids, `cumsum(input_ids != "
     "pad)`): torch-mlir lowers it to its TMTensor dialect; a scan of constants is folded, "
     "one of input data stays (the dialect computes on integers only as gather indices)"),
    ("gather of integers", "the padding mask (`attention_mask != 0`, an i1 tensor computed "
     "from an input) read at constant positions, or RoBERTa's positions: a gather of a "
     "boolean table, or at indices computed from data (doppler.gather takes float, i32 and "
     "i64 tables at integer data)"),
    ("integer comparison", "transformers' padding mask compared from the `attention_mask` "
     "(or `input_ids`) input into an i1 tensor: a comparison of input data (comparisons of "
     "constants, the causal mask's, are folded)"),
    ("integer/boolean arithmetic (arith.andi)", "`&` of the (folded) causal mask with that "
     "padding mask"),
    ("select on an i1 mask", "`where` on that mask (scores masked): its condition depends "
     "on an input; `where` on a constant mask converts"),
    ("element type cast", "RoBERTa's integer casts of its input-dependent positions"),
    ("integer/boolean arithmetic", "RoBERTa's integer arithmetic on its input-dependent "
     "positions"),
    ("exact erf", "`math.erf` outside a body the conversion reads"),
    ("(arith.extf), f32/f64", "an f32 -> f64 island whose f64 values leave other than "
     "through a cast back"),
    ("(arith.truncf), f32/f64", "the f64 -> f32 cast of such an island"),
    ("gather of floats", "a gather whose indices are neither one integer input nor "
     "computed from constants"),
    ("float comparison into an i1 mask", "a comparison of data that is not a safe softmax"),
    ("iota", "`linalg.index` mixed with data"),
    ("linalg.fill: fill", "an i1/i64 fill of a non-constant"),
    ("copy or broadcast", "copies and broadcasts of input-dependent i1/i64 tensors"),
]


def why_over_the_zoo(rows):
    """Each kind of op left, over every model: count, models and why."""
    kinds = collections.OrderedDict()
    for r in rows:
        for what, count in r.left.items():
            key = next((k for k, _ in WHY if k in what), None)
            label = key or what
            entry = kinds.setdefault(label, [0, [], None])
            entry[0] += count
            if r.name not in entry[1]:
                entry[1].append(r.name)
            entry[2] = dict(WHY).get(key, "not classified")
    lines = []
    for label, (count, models, why) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"- {count} ops matching `{label}` in {len(models)} models "
                     f"({', '.join(models)}): {why}.")
    return "\n".join(lines) or "Nothing is left."


def section(rows, total_s, versions, frozen):
    left_models = [r.name for r in rows if r.left or r.error]
    weights = "as constants (`--frozen`)" if frozen else \
        "as function arguments (buffers stay torch-mlir's constants)"
    return f"""{SECTION}

Written by `scripts/zoo_linalg.py --table docs/zoo.md` (run with
build/torch-mlir-venv's python, installed by `scripts/setup_torch_mlir.sh`):
each model exported with `torch.export` (non-strict), decomposed with
torch-mlir's table and imported to linalg on tensors by PyPI torch-mlir
with `torch_mlir.fx.export_and_import(..., output_type="linalg-on-tensors")`
({versions}), parameters {weights}. Printed in the generic op form:
torch-mlir's MLIR is newer than doppler-opt's 22 and the generic form has no
custom syntax to disagree on; `--allow-unregistered-dialect` lets
torch-mlir's `tm_tensor` ops through (doppler-opt does not register that
dialect). torch-mlir's `cf.assert` bounds checks inside gather bodies are
erased (no values; doppler-opt has no `cf`). Then `doppler-opt
--convert-linalg-to-doppler=full=true` (and `report=true` for the reasons).
*linalg/tensor ops in*: the function's linalg and tensor ops (not
`tensor.empty`); *converted*: the ops convert-linalg-to-doppler replaced
(the fills and pads it folds into their users are not counted: in =
converted + folded + left); *doppler ops out*: the doppler ops it made;
*left*: the ops it left, by name (full=true fails on each), torch-mlir's
non-linalg ops included; *import*: export, decompositions, torch-mlir's
lowering, printing; *convert*: doppler-opt, twice; *rel. error* (`--run`,
models with nothing left): the converted program, its tensor constants
(torch-mlir's frozen buffers, the constants the conversion folded) made
arguments, placed by `doppler-pipeline` on 4 cpu4 devices and run by
doppler-run on the model's inputs and parameters, against PyTorch eager:
max |out - ref| / max |ref|, as the zoo's own check; *run s*: placing and
running.

{table(rows)}

{platform.system().lower()}, {os.cpu_count()} CPUs (shared); these {len(rows)} models:
{total_s:.0f} s. With something left: {', '.join(left_models) or 'none'}.

Set-up: `scripts/setup_torch_mlir.sh` (about 10 s: the 80 MB torch-mlir
wheel, torch from build/torch-venv through a .pth file, no torch pinned),
then `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 build/torch-mlir-venv/bin/python
scripts/zoo_linalg.py --run --table docs/zoo.md`. Not in scripts/test.sh's
set-up; python/tests/test_zoo_linalg.py runs ResNet-18 and GPT-2 through it
with `--run` when the venv is there and is skipped otherwise.

### What is left, and why

What the conversion folds or rewrites first (docs/LinalgFrontends.md):
ops on constants only (positions, causal masks, cumsums and sin/cos tables
of constants), `where` on a constant mask, torch's safe softmax, the f64
LayerNorm statistics (computed in f32), and embeddings and other gathers
(one doppler.gather each). What is computed from the integer inputs (the
`attention_mask` and `input_ids` given to the model: the padding mask
compared, gathered, `&`-ed with the causal mask and selected on;
RoBERTa's positions `cumsum(input_ids != pad)` and the gather at them) is
carried as f64 floats (comparison and `where` joins, conversion einsums,
a gather at float indices, the cumsum as a contraction with a 0/1
triangle). Over the zoo, by kind (where it comes from, why it stays):

{why_over_the_zoo(rows)}

Per model: count x op, what it computes, element types (operands -> result),
doppler-opt's reason, and the model source lines torch-mlir's locations name.

{left_list(rows)}
"""


def write_section(path, text):
    """Writes `text` as the SECTION of `path`, in place of an earlier one
    (up to the next `## ` heading), or appended."""
    from doppler import zoo
    zoo.replace_section(path, SECTION, text)


def main(argv=None):
    from doppler import zoo
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help=f"default: all ({', '.join(zoo.MODELS)})")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "zoo-linalg"))
    parser.add_argument("--doppler-opt",
                        default=os.path.join(os.environ.get("DOPPLER_BUILD_DIR",
                                                            os.path.join(ROOT, "build")),
                                             "bin", "doppler-opt"))
    parser.add_argument("--table", help="write the section into this Markdown file")
    parser.add_argument("--run", action="store_true",
                        help="also place each model converted with nothing left on 4 cpu4 "
                        "devices, run it with doppler-run and compare with PyTorch")
    parser.add_argument("--frozen", action="store_true",
                        help="parameters as constants (torch-mlir's default) instead of "
                        "arguments")
    args = parser.parse_args(argv)
    names = args.models or list(zoo.MODELS)
    unknown = [n for n in names if n not in zoo.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}")
    if not os.access(args.doppler_opt, os.X_OK):
        parser.error(f"no doppler-opt at {args.doppler_opt}")
    os.makedirs(args.out, exist_ok=True)
    import importlib.metadata as md
    import torch
    versions = f"torch-mlir {md.version('torch-mlir')}, torch {torch.__version__.split('+')[0]}"
    for lib in ("torchvision", "transformers"):
        try:
            versions += f", {lib} {md.version(lib)}"
        except md.PackageNotFoundError:
            pass
    rows = []
    start = time.perf_counter()
    for name in names:
        if not zoo.available(name):
            print(f"{name}: skipped ({zoo.MODELS[name][0]} is not installed)", file=sys.stderr)
            continue
        row = check(name, args.out, args.doppler_opt, frozen=args.frozen, run=args.run)
        rows.append(row)
        print(table([row]).splitlines()[-1], file=sys.stderr, flush=True)
    text = section(rows, time.perf_counter() - start, versions, args.frozen)
    print(text)
    if args.table:
        write_section(args.table, text)
    bad_run = any(r.run_error or (r.rel_error is not None and r.rel_error > 1e-4)
                  for r in rows)
    return 1 if any(r.error or r.left for r in rows) or bad_run else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 31 item 6, by simulation: a 32-layer LLaMA at 7B shapes on 2, 4 and
8 DGX H100 nodes (presets h100x8-2n, -4n, -8n), Doppler's placement against
a Megatron-style one, both judged by the same simulator.

  scripts/multinode_table.py [--layers 32] [--seq 2048] [--parts 8]
                             [--nodes 2 4 8] [--policies doppler critical-path]
                             [--build build] [--keep DIR]

Steps (docs/SystemDescription.md, "A 7B model on 2-8 nodes"):
 1. One LLaMA block at 7B shapes (d_model 4096, 32 heads, SwiGLU 11008) from
    examples/generate_examples.py, stacked --layers times: layer i reads
    layer i-1's output and its own weights; the rotary tables and the mask
    are shared.
 2. doppler-opt: costs (h100x8-2n; every H100 preset costs alike), each
    einsum decomposed into --parts blocks, elementwise chains fused, costs
    again: the one program every placement below places.
 3. Each policy places it with doppler-place on the 8 x N GPUs (the time is
    the tool's placement time); `--network` also simulates the placement on
    the system's links and network (NVLink inside a node, NIC contention
    between nodes, transfers of the tensors' bytes), judges the placement
    budget (doppler's starts and refinement) by it, and makes the
    heuristics price each device pair's link; doppler's budget then also
    starts from the hierarchical placements (pipeline stages over 2..N
    nodes, critical-path inside each; Heuristics.h placeHierarchical). The
    `start` column names the start the budget refined.
 4. Megatron-style: layers in N contiguous pipeline stages, stage s on node
    s; inside a node each op's blocks spread over its 8 GPUs (tensor
    parallel): the blocks of one decomposed einsum or fused op (the ops
    with its source location and the same text but for value names; the
    partial sums of a split contraction are a group of their own) go to
    GPUs 0..7 in turn, so block k of an op and block k of the next one share
    a GPU; slices and assembles go to their first consumer's GPU. Values
    change GPUs where the decomposition re-slices them, as Megatron's
    all-gathers and reductions do. An op's layer is that of its source
    line. Evaluated with doppler-place --assignment on the same
    simulators.

The table gives milliseconds: `reference` is the placement pipeline's own
simulator (METHOD section 2), which prices every transfer at the NVLink
figure; `network` is the network simulator above, the figure to compare.
"""

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_ARGS = ("rope_cos", "rope_sin", "causal_mask")
NAME = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*")


def load_generator():
    path = os.path.join(ROOT, "examples", "generate_examples.py")
    spec = importlib.util.spec_from_file_location("generate_examples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stacked_llama(layers, seq, d_model, heads, ffn):
    """The block of generate_examples.py, `layers` times in one function."""
    block = load_generator().llama(seq, d_model, heads, ffn, "f32")
    header, _, rest = block.partition("func.func @llama_block(\n")
    arg_text, _, rest = rest.partition(")\n    -> (")
    result_type, _, rest = rest.partition(") {\n")
    body, _, tail = rest.rpartition("\n  return ")
    output = tail.split(" :")[0].strip()
    args = [line.strip().rstrip(",") for line in arg_text.split("\n")]
    arg_types = dict(a.split(": ", 1) for a in args)

    def rename(text, layer):
        def one(match):
            name = match.group(0)[1:]
            if name in SHARED_ARGS:
                return "%" + name
            if name == "x":
                return "%x" if layer == 0 else f"%l{layer - 1}_{output[1:]}"
            return f"%l{layer}_{name}"
        return NAME.sub(one, text)

    signature = ["%x: " + arg_types["%x"]]
    signature += [f"%{a}: {arg_types['%' + a]}" for a in SHARED_ARGS]
    lines = []
    for layer in range(layers):
        for a in args:
            name = a.split(":")[0][1:]
            if name != "x" and name not in SHARED_ARGS:
                signature.append(f"%l{layer}_{name}: {arg_types['%' + name]}")
        lines.append(f"  // Layer {layer}.")
        lines.append(rename(body, layer))
    last = f"%l{layers - 1}_{output[1:]}"
    return (f"// {layers} LLaMA blocks (examples/generate_examples.py llama "
            f"--seq {seq} --d-model {d_model} --heads {heads} --ffn {ffn}), "
            f"stacked by scripts/multinode_table.py.\n"
            f"func.func @llama_stack(\n    " + ",\n    ".join(signature) +
            f")\n    -> ({result_type}) {{\n" + "\n".join(lines) +
            f"\n  return {last} : {result_type}\n}}\n")


def run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{done.stderr.strip()}")
    return done.stdout


OP_LINE = re.compile(r"^\s*(%[^=]*?)\s*=\s*([a-z_]+\.[a-z_]+)(.*)$")
VALUE = re.compile(r"%([A-Za-z0-9_]+)(?:#\d+)?")
COMPUTE = ("doppler.einsum", "doppler.fused")


def parse_ops(placed_text):
    """The function's ops in order: (results, op name, operand names, key);
    key is the op's text without its value names (the blocks of one
    decomposed op share it)."""
    ops = []
    for line in placed_text.split("\n"):
        match = OP_LINE.match(line)
        if not match:
            continue
        results = VALUE.findall(match.group(1))
        operands = VALUE.findall(match.group(3).split(" : ")[0])
        key = match.group(2) + VALUE.sub("", match.group(3))
        ops.append((results, match.group(2), operands, key))
    return ops


LOC_ALIAS = re.compile(r'^#(loc\d+) = loc\((.*)\)$', re.M)
OP_LOC = re.compile(r"loc\(#(loc\d+)\)\s*$")


def source_lines(program_text):
    """Per op of the program (printed with --mlir-print-debuginfo): the
    line of the stacked source it comes from (a fused op's first op's)."""
    aliases = dict(LOC_ALIAS.findall(program_text))

    def line_of(alias):
        target = aliases.get(alias, "")
        if target.startswith("fused["):
            return line_of(target[len("fused[#"):].split(",")[0].rstrip("]"))
        match = re.search(r":(\d+):\d+$", target)
        return int(match.group(1)) if match else 0

    lines = []
    for line in program_text.split("\n"):
        if OP_LINE.match(line):
            match = OP_LOC.search(line)
            lines.append(line_of(match.group(1)) if match else 0)
    return lines


def megatron_assignment(ops, op_lines, layer_of_line, layers, nodes,
                        tensor_parallel=8):
    """Pipeline stages across nodes, blocks over a node's GPUs (see top)."""
    producer = {}
    device = [None] * len(ops)
    blocks = {}
    for i, (results, name, operands, key) in enumerate(ops):
        for r in results:
            producer[r] = i
        if name not in COMPUTE:
            continue
        group = (op_lines[i], key)
        block = blocks.get(group, 0)
        blocks[group] = block + 1
        stage = layer_of_line(op_lines[i]) * nodes // layers
        device[i] = stage * tensor_parallel + block % tensor_parallel
    # Slices, assembles and the like: on their first consumer's GPU (in
    # program order), else on their first producer's.
    first_consumer = {}
    for i in reversed(range(len(ops))):
        for o in ops[i][2]:
            if o in producer:
                first_consumer[producer[o]] = i
    for i in reversed(range(len(ops))):
        if device[i] is None and i in first_consumer:
            device[i] = device[first_consumer[i]]
    for i, (_, _, operands, _) in enumerate(ops):
        if device[i] is None:
            inputs = [producer[o] for o in operands if o in producer]
            stage = layer_of_line(op_lines[i]) * nodes // layers
            device[i] = device[inputs[0]] if inputs else stage * tensor_parallel
    return device


def used_gpus(report):
    """GPUs with at least one op, or None when the report does not say."""
    if "device_nodes" not in report:
        return None
    return sum(1 for n in report["device_nodes"] if n)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--ffn", type=int, default=11008)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--nodes", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--policies", nargs="+", default=["doppler", "critical-path"])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--keep", metavar="DIR",
                        help="write the programs and assignments to DIR")
    args = parser.parse_args()
    opt = os.path.join(args.build, "bin", "doppler-opt")
    place = os.path.join(args.build, "bin", "doppler-place")

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        os.makedirs(tmp, exist_ok=True)
        source = os.path.join(tmp, "stack.mlir")
        program = os.path.join(tmp, "stack.decomposed.mlir")
        with open(source, "w") as f:
            f.write(stacked_llama(args.layers, args.seq, args.d_model, args.heads,
                                  args.ffn))
        system = "h100x8-2n"
        begin = time.monotonic()
        run([opt, source, f"--doppler-annotate-costs=system={system}",
             f"--doppler-decompose=parts={args.parts} system={system}",
             "--canonicalize", "--doppler-fuse-elementwise",
             f"--doppler-annotate-costs=system={system}",
             "--mlir-print-debuginfo", "-o", program])
        prepare = time.monotonic() - begin
        with open(program) as f:
            text = f.read()
        ops = parse_ops(text)
        op_lines = source_lines(text)
        with open(source) as f:
            starts = [n + 1 for n, line in enumerate(f.read().split("\n"))
                      if line.startswith("  // Layer ")]

        def layer_of_line(line):
            return max(0, sum(1 for start in starts if start <= line) - 1)

        rows = []
        for nodes in args.nodes:
            system = f"h100x8-{nodes}n"
            devices = 8 * nodes
            for policy in args.policies:
                out = run([place, program, "--devices", str(devices), "--system", system,
                           "--policy", policy, "--network", "--json"])
                report = json.loads(out)
                chosen = [s["name"] for s in report.get("starts", []) if s["chosen"]]
                rows.append((nodes, policy, report["seconds"], report["makespan"],
                             report["network_makespan"], used_gpus(report),
                             chosen[0] if chosen else None))
            assignment = megatron_assignment(ops, op_lines, layer_of_line,
                                             args.layers, nodes)
            path = os.path.join(tmp, f"megatron-{nodes}.txt")
            with open(path, "w") as f:
                f.write(", ".join(map(str, assignment)) + "\n")
            out = run([place, program, "--devices", str(devices), "--system", system,
                       "--assignment", path, "--network", "--json"])
            report = json.loads(out)
            rows.append((nodes, "megatron-style", None, report["makespan"],
                         report["network_makespan"], used_gpus(report), None))

    print(f"{args.layers} layers, seq {args.seq}, d_model {args.d_model}, "
          f"{args.heads} heads, ffn {args.ffn}; {len(ops)} ops after decomposition "
          f"into {args.parts} parts and fusion ({prepare:.1f} s)")
    print("| nodes | GPUs | placement | start | placement time (s) "
          "| makespan, reference (ms) | makespan, network (ms) | GPUs used |")
    print("|---|---|---|---|---|---|---|---|")
    for nodes, policy, seconds, makespan, network, used, start in rows:
        seconds_text = "-" if seconds is None else f"{seconds:.1f}"
        print(f"| {nodes} | {8 * nodes} | {policy} | {start or '-'} | {seconds_text} "
              f"| {makespan / 1e3:.2f} | {network / 1e3:.2f} "
              f"| {used if used is not None else '-'} |")


if __name__ == "__main__":
    main()

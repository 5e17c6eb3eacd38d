#!/usr/bin/env python3
"""Times one program on IREE and on Doppler's CPU runtime, same placement.

For each configuration (devices D, decomposition parts P):
  1. doppler-opt --doppler-pipeline="system=S devices=D parts=P" (placement);
  2. doppler-run PLACED --backend cpu --devices D --repeat R --json: the
     median measured makespan of Doppler's runtime on that placement;
  3. doppler-translate --export-iree, iree-compile for D local llvm-cpu
     devices (--iree-llvmcpu-target-cpu=host), iree-benchmark-module with D
     --device=local-task: the median wall time of R calls (real_time);
     once with IREE's default task topology and once with one worker per
     device (--task_topology_max_group_count=1), the runtime's own model.
Outputs of IREE on every configuration are compared with the first
configuration's (same inputs, numpy seeded uniform [-1, 1)).

Prints a Markdown table. Run with the IREE venv's python (numpy).

  iree_benchmark.py PROGRAM.mlir --tools build/bin --iree VENV/bin \
      --work-dir DIR [--configs 1:1,1:4,2:4,4:4] [--system cpu4] [--repeat 5]
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from iree_check import function_signature, DTYPES  # noqa: E402


def run(cmd, what, fatal=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 and not fatal:
        print(f"# {what} failed with status {proc.returncode}: " + " ".join(cmd),
              file=sys.stderr)
        return None
    if proc.returncode != 0:
        sys.exit(f"iree_benchmark: {what} failed:\n  " + " ".join(cmd) + "\n"
                 + proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program")
    parser.add_argument("--tools", required=True)
    parser.add_argument("--iree", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--configs", default="1:1,1:4,2:4,4:4",
                        help="comma-separated DEVICES:PARTS")
    parser.add_argument("--system", default="cpu4")
    parser.add_argument("--policy", default="doppler")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    tool = lambda name: os.path.join(args.tools, name)
    iree = lambda name: os.path.join(args.iree, name)
    stem = os.path.splitext(os.path.basename(args.program))[0]

    name, arg_types, result_types = function_signature(args.program)
    rng = np.random.default_rng(0)
    inputs = []
    for i, (shape, dtype) in enumerate(arg_types):
        path = os.path.join(args.work_dir, f"{stem}.in{i}.npy")
        np.save(path, rng.uniform(-1, 1, size=shape).astype(DTYPES[dtype]))
        inputs.append(path)

    rows = []
    reference = None
    for config in args.configs.split(","):
        devices, parts = (int(x) for x in config.split(":"))
        base = os.path.join(args.work_dir, f"{stem}.d{devices}.p{parts}")
        placed = base + ".placed.mlir"
        run([tool("doppler-opt"), args.program,
             f"--doppler-pipeline=system={args.system} devices={devices} parts={parts} "
             f"policy={args.policy}", "-o", placed], "doppler-opt")
        text = open(placed).read()
        ops = len(re.findall(r"= doppler\.einsum ", text))
        moves = len(re.findall(r"= doppler\.transfer ", text))
        predicted = re.search(r"doppler\.makespan = ([0-9.e+-]+)", text)
        doppler = json.loads(run([tool("doppler-run"), placed, "--backend", "cpu",
                                  "--devices", str(devices), "--repeat", str(args.repeat),
                                  "--json"], "doppler-run").stdout)
        exported = base + ".iree.mlir"
        run([tool("doppler-translate"), "--export-iree", placed, "-o", exported], "export")
        vmfb = base + ".vmfb"
        compiled = run([iree("iree-compile"), exported,
                        "--iree-hal-local-target-device-backends=llvm-cpu",
                        "--iree-llvmcpu-target-cpu=host", "-o", vmfb], "iree-compile", fatal=False)
        row = [devices, parts, ops, moves,
               float(predicted.group(1)) * 1e-6 if predicted else float("nan"),
               doppler["measured_makespan_s"]]
        if compiled is None:
            rows.append(row + [None, None, None])
            continue
        common = [f"--module={vmfb}", f"--function={name}"] + \
            ["--device=local-task"] * devices + [f"--input=@{p}" for p in inputs]
        out = base + ".out0.npy"
        run([iree("iree-run-module")] + common + [f"--output=@{out}"], "iree-run-module")
        value = np.load(out).astype(np.float64)
        if reference is None:
            reference, rel = value, 0.0
        else:
            rel = float(np.linalg.norm(value - reference) / np.linalg.norm(reference))
        times = {}
        for label, extra in (("default", []), ("1 worker/device", ["--task_topology_max_group_count=1"])):
            bench = run([iree("iree-benchmark-module")] + common + extra +
                        [f"--benchmark_repetitions={args.repeat}", "--benchmark_format=json",
                         "--benchmark_min_warmup_time=0.1"], "iree-benchmark-module")
            data = json.loads(bench.stdout[bench.stdout.index("{"):])
            medians = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"]
            b = medians[0]
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            times[label] = b["real_time"] * scale
        rows.append(row + [times["default"], times["1 worker/device"], rel])
        print(f"# done D={devices} P={parts}", file=sys.stderr)

    print(f"{stem}: medians of {args.repeat} runs, seconds; IREE llvm-cpu local-task "
          f"devices, Doppler CPU runtime; placement by policy={args.policy} on system "
          f"{args.system}")
    print()
    print("| devices | parts | einsums | transfers | Doppler predicted | Doppler runtime "
          "| IREE (default workers) | IREE (1 worker/device) | IREE (1 worker) / Doppler | "
          "IREE out vs first row |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d, p, ops, moves, pred, rt, iree_t, iree_1, rel in rows:
        if iree_t is None:
            print(f"| {d} | {p} | {ops} | {moves} | {pred:.4f} | {rt:.4f} | "
                  f"iree-compile crashed | - | - | - |")
            continue
        print(f"| {d} | {p} | {ops} | {moves} | {pred:.4f} | {rt:.4f} | {iree_t:.4f} | "
              f"{iree_1:.4f} | {iree_1 / rt:.2f} | {rel:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

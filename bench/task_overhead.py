#!/usr/bin/python3
"""The runtime's cost per task against PyTorch eager's cost per op (issue 35).

Two programs of small ops (16-element f32 tensors, so that the work is
negligible and the time is the per-op overhead): a chain of N scales, each
reading the previous result, and a fan of N scales of one input summed by a
balanced tree of N - 1 adds. Doppler runs them with doppler-run (placed by
doppler-pipeline with no fusion and no decomposition, on 1 device and, for
the fan, on 2: the cost of a task and of a task whose inputs come from
another device's thread); PyTorch eager runs the same ops (torch.mul,
torch.add) in a loop. Rounds are interleaved, one thread each (OpenBLAS and
OpenMP pinned before torch loads), and the table gives medians per op and
the ratio Doppler / PyTorch.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/task_overhead.py
    /usr/bin/python3 bench/task_overhead.py --quick      # smoke test
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = "tensor<16xf32>"


def chain_mlir(n):
    lines = [f"func.func @chain(%x: {T}) -> {T} {{"]
    value = "%x"
    for i in range(n):
        lines.append(f'  %v{i} = doppler.einsum "i->i" join(scale, 1.0001) ({value}) '
                     f": ({T}) -> {T}")
        value = f"%v{i}"
    lines.append(f"  return {value} : {T}\n}}")
    return "\n".join(lines) + "\n"


def fan_mlir(n):
    lines = [f"func.func @fan(%x: {T}) -> {T} {{"]
    values = []
    for i in range(n):
        lines.append(f'  %s{i} = doppler.einsum "i->i" join(scale, {1 + i * 1e-4:.6f}) (%x) '
                     f": ({T}) -> {T}")
        values.append(f"%s{i}")
    count = 0
    while len(values) > 1:
        paired = []
        for a, b in zip(values[0::2], values[1::2]):
            lines.append(f'  %a{count} = doppler.einsum "i,i->i" join(add) ({a}, {b}) '
                         f": ({T}, {T}) -> {T}")
            paired.append(f"%a{count}")
            count += 1
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    lines.append(f"  return {values[0]} : {T}\n}}")
    return "\n".join(lines) + "\n"


def torch_chain(torch, x, n):
    for _ in range(n):
        x = torch.mul(x, 1.0001)
    return x


def torch_fan(torch, x, n):
    values = [torch.mul(x, 1 + i * 1e-4) for i in range(n)]
    while len(values) > 1:
        paired = [torch.add(a, b) for a, b in zip(values[0::2], values[1::2])]
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    return values[0]


def place(build, source, devices, out):
    subprocess.run([os.path.join(build, "bin", "doppler-opt"), source,
                    f"--doppler-pipeline=system=cpu4 devices={devices} parts=1 fuse=false "
                    "offload=false budget-evaluations=0 policy=critical-path", "-o", out],
                   check=True, capture_output=True)


def doppler_seconds(build, placed, repeat):
    done = subprocess.run([os.path.join(build, "bin", "doppler-run"), placed, "--json",
                           "--repeat", str(repeat)], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout)["measured_makespan_s"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.rounds, args.repeat = 64, 1, 1
    import torch
    torch.set_num_threads(1)
    n = args.ops
    samples = {}
    with tempfile.TemporaryDirectory(prefix="doppler-overhead-") as tmp:
        programs = {}
        for name, text, ops in (("chain", chain_mlir(n), n), ("fan", fan_mlir(n), 2 * n - 1)):
            source = os.path.join(tmp, f"{name}.mlir")
            with open(source, "w") as f:
                f.write(text)
            for devices in ((1,) if name == "chain" else (1, 2)):
                placed = os.path.join(tmp, f"{name}-{devices}.mlir")
                place(args.build, source, devices, placed)
                programs[(name, devices)] = (placed, ops)
        x = torch.randn(16)
        for _ in range(args.rounds):
            for (name, devices), (placed, ops) in programs.items():
                seconds = doppler_seconds(args.build, placed, args.repeat)
                samples.setdefault((name, f"doppler D={devices}"), []).append(seconds / ops)
            for name, function, ops in (("chain", torch_chain, n), ("fan", torch_fan, 2 * n - 1)):
                function(torch, x, n)  # warm-up
                times = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    function(torch, x, n)
                    times.append(time.perf_counter() - start)
                samples.setdefault((name, "torch eager"), []).append(
                    statistics.median(times) / ops)
    print(f"| program ({n} ops) | runner | us per op | / torch |")
    print("|---|---|---|---|")
    for (name, runner), values in samples.items():
        per_op = statistics.median(values)
        torch_op = statistics.median(samples[(name, "torch eager")])
        print(f"| {name} | {runner} | {per_op * 1e6:.2f} | {per_op / torch_op:.2f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The runtime's convolution and pooling kernels against PyTorch eager.

Times the shapes of bench/WindowBench.cpp (ResNet-18's 3x3 layer, its 7x7
stem and 1x1 downsample, ConvNeXt's 7x7 depthwise, ResNet's 3x3 max pool,
and the 3x3 layer in f64) with Debian's torch (/usr/bin/python3) on one
thread, and runs doppler-bench-window for the runtime's automatic choice
(its JSON output, medians of its repetitions). Both are pinned to the same
core. Each round measures every shape twice in a row, Doppler then torch
(torch first on odd rounds), so that background load, which on a shared
2-vCPU machine changes by the second, hits both alike. Prints per shape the
medians over rounds and the median of the rounds' ratios Doppler / torch
(the target: at most 1.25 on every shape). Times are CPU times by default (on a
shared machine real time mostly measures the other processes); --clock
real uses wall-clock time instead.

    /usr/bin/python3 bench/window_torch.py [--binary build/bin/doppler-bench-window]
        [--rounds 5] [--repetitions 3] [--cpu N] [--clock cpu|real] [--check]

Thread counts: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS
are set to 1 before torch loads (Debian's torch calls OpenBLAS, whose
threads torch.set_num_threads does not limit), and torch.set_num_threads(1).
"""

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

TARGET_RATIO = 1.25

# name: (input shape, weight shape or None for a pool, conv/pool arguments,
# dtype); the names and shapes are WindowBench.cpp's.
WORKLOADS = {
    "resnet-3x3": ((1, 64, 56, 56), (64, 64, 3, 3),
                   dict(stride=1, padding=1), torch.float32),
    "resnet-stem": ((1, 3, 224, 224), (64, 3, 7, 7),
                    dict(stride=2, padding=3), torch.float32),
    "resnet-down": ((1, 64, 56, 56), (128, 64, 1, 1),
                    dict(stride=2, padding=0), torch.float32),
    "convnext-dw": ((1, 96, 56, 56), (96, 1, 7, 7),
                    dict(stride=1, padding=3, groups=96), torch.float32),
    "resnet-pool": ((1, 64, 112, 112), None,
                    dict(kernel_size=3, stride=2, padding=1), torch.float32),
    "resnet-3x3-f64": ((1, 64, 56, 56), (64, 64, 3, 3),
                       dict(stride=1, padding=1), torch.float64),
}


def torch_call(name):
    """A no-argument function running the workload once in torch."""
    shape, weight_shape, kwargs, dtype = WORKLOADS[name]
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(shape, generator=gen, dtype=dtype) * 2 - 1
    if weight_shape is None:
        return lambda: F.max_pool2d(x, **kwargs)
    w = torch.rand(weight_shape, generator=gen, dtype=dtype) * 2 - 1
    return lambda: F.conv2d(x, w, **kwargs)


def time_torch(name, min_time, repetitions, clock):
    """Median ms of `repetitions` repetitions, each the mean of as many calls
    as fill `min_time` seconds (Google Benchmark's way)."""
    call = torch_call(name)
    now = time.process_time if clock == "cpu" else time.perf_counter
    with torch.no_grad():
        for _ in range(3):
            call()
        start = time.perf_counter()
        call()
        once = max(time.perf_counter() - start, 1e-6)
        calls = max(1, int(min_time / once))
        means = []
        for _ in range(repetitions):
            start = now()
            for _ in range(calls):
                call()
            means.append((now() - start) / calls * 1e3)
    return statistics.median(means)


def time_doppler(binary, name, cpu, min_time, repetitions, clock):
    """Median ms of the automatic method on workload `name`, from the
    benchmark's JSON output."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        done = subprocess.run(
            [binary, f"--benchmark_filter=^auto/{name}/", f"--pin-cpu={cpu}",
             f"--benchmark_repetitions={repetitions}",
             f"--benchmark_min_time={min_time}",
             f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"error: {binary} failed:\n{done.stderr}")
        report = json.load(open(out.name))
    for run in report["benchmarks"]:
        if run.get("aggregate_name") == "median":
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0,
                     "s": 1e3}[run["time_unit"]]
            return run[clock + "_time"] * scale
    sys.exit(f"error: {binary} reported no median for {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="build/bin/doppler-bench-window")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--cpu", type=int, default=None,
                        help="core to pin both to (default: the last one "
                             "this process may use)")
    parser.add_argument("--clock", choices=("cpu", "real"), default="cpu")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 when a ratio exceeds {TARGET_RATIO}")
    args = parser.parse_args()

    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, pinned to core {cpu}; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    torch_ms = {name: [] for name in WORKLOADS}
    doppler_ms = {name: [] for name in WORKLOADS}
    ratios = {name: [] for name in WORKLOADS}
    for round_index in range(args.rounds):
        for name in WORKLOADS:
            measure = [
                lambda: doppler_ms[name].append(time_doppler(
                    args.binary, name, cpu, args.min_time, args.repetitions,
                    args.clock)),
                lambda: torch_ms[name].append(time_torch(
                    name, args.min_time, args.repetitions, args.clock)),
            ]
            for step in (measure if round_index % 2 == 0 else measure[::-1]):
                step()
            ratios[name].append(doppler_ms[name][-1] / torch_ms[name][-1])
        print(f"round {round_index + 1}/{args.rounds} done")

    print(f"\nmedian {args.clock} times over {args.rounds} rounds of "
          f"{args.repetitions} repetitions (load average at end "
          f"{os.getloadavg()[0]:.2f}):")
    print(f"{'workload':<16} {'torch ms':>10} {'doppler ms':>11} "
          f"{'doppler/torch':>14} {'(rounds: min-max)':>18}")
    worst = 0.0
    for name in WORKLOADS:
        ratio = statistics.median(ratios[name])
        worst = max(worst, ratio)
        over = "" if ratio <= TARGET_RATIO else f"  over {TARGET_RATIO}"
        print(f"{name:<16} {statistics.median(torch_ms[name]):>10.3f} "
              f"{statistics.median(doppler_ms[name]):>11.3f} {ratio:>14.3f} "
              f"{min(ratios[name]):>8.2f} - {max(ratios[name]):.2f}{over}")
    if args.check and worst > TARGET_RATIO:
        sys.exit(1)


if __name__ == "__main__":
    main()

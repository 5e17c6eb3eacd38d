#!/usr/bin/env python3
"""How long a copy between two busy devices waits (runtime/README.md,
"Copies waiting for a core").

Two devices each run a chain of --steps N x N GEMMs (f32); every second step
device 0 sends a slice of --rows rows of its chain value to device 1, where
an elementwise einsum reads it. One doppler-run-plan (a warm-up and --repeat
timed runs); from the median run's Chrome trace, per hop: the wait (the
copy's start less its producer's end), the copy's own time, and the
consumer's start less the producer's end, in microseconds (median and
largest). Run it under `chrt -f 1` as the zoo benchmark runs, or without.

    python3 bench/copy_wait.py --rows 128   # 256 KiB hops
    python3 bench/copy_wait.py --rows 128 --large-copies compute-workers
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_tool(name):
    """$DOPPLER_BUILD_DIR/bin/NAME, else <repo>/build/bin/NAME (no torch needed)."""
    build = os.environ.get("DOPPLER_BUILD_DIR") or os.path.join(REPO, "build")
    path = os.path.join(build, "bin", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"error: {path} not found; build it or set DOPPLER_BUILD_DIR")
    return path


def build_plan(n, steps, rows):
    """The plan and, per hop, (producer, transfer, consumer) task ids."""
    tasks, arguments, hops = [], [], []

    def add(task):
        task["id"] = len(tasks)
        tasks.append(task)
        return task["id"]

    def argument(device, shape):
        arguments.append({"shape": shape, "type": "f32"})
        return add({"argument": len(arguments) - 1, "device": device, "kind": "input",
                    "shape": shape, "type": "f32"})

    chain = {d: argument(d, [n, n]) for d in (0, 1)}
    weights = {d: argument(d, [n, n]) for d in (0, 1)}
    for step in range(steps):
        for d in (0, 1):
            chain[d] = add({"aggregation": "add", "device": d, "inputs": [chain[d], weights[d]],
                            "join": "mul", "kind": "einsum", "shape": [n, n],
                            "spec": "ij,jk->ik", "type": "f32"})
        if step % 2 == 1 and step < steps - 4:
            piece = add({"device": 0, "inputs": [chain[0]], "kind": "slice", "offsets": [0, 0],
                         "shape": [rows, n], "type": "f32"})
            copy = add({"device": 1, "inputs": [piece], "kind": "transfer",
                        "shape": [rows, n], "type": "f32"})
            used = add({"device": 1, "inputs": [copy], "join": "neg", "kind": "einsum",
                        "shape": [rows, n], "spec": "ij->ij", "type": "f32"})
            hops.append((chain[0], piece, copy, used))
    plan = {"format": "doppler-runtime-plan", "version": 1, "function": "copy_wait",
            "devices": 2, "arguments": arguments,
            "results": [chain[0], chain[1]] + [hop[3] for hop in hops], "tasks": tasks}
    return plan, hops


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=512, help="GEMM side N")
    parser.add_argument("--steps", type=int, default=24, help="GEMMs per device")
    parser.add_argument("--rows", type=int, default=128, help="rows of each hop (N floats each)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs")
    parser.add_argument("--large-copies", default="auto",
                        choices=("auto", "copy-worker", "idle-producer", "compute-workers"),
                        help="doppler-run-plan --large-copies (who makes the copies)")
    args = parser.parse_args()
    if min(args.size, args.steps, args.rows, args.repeat) < 1 or args.rows > args.size:
        parser.error("--size, --steps, --rows, --repeat must be positive, --rows at most --size")
    if args.steps < 6:
        parser.error("--steps must be at least 6 (hops leave the last 4 steps alone)")
    plan, hops = build_plan(args.size, args.steps, args.rows)
    with tempfile.TemporaryDirectory(prefix="doppler-copy-wait-") as tmp:
        plan_path, trace_path = os.path.join(tmp, "plan.json"), os.path.join(tmp, "trace.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        done = subprocess.run([find_tool("doppler-run-plan"), plan_path, "--repeat",
                               str(args.repeat), "--trace", trace_path, "--json",
                               "--large-copies", args.large_copies],
                              check=True, capture_output=True, text=True, env=env)
        report = json.loads(done.stdout)
        with open(trace_path) as f:
            events = {e["args"]["value"]: e for e in json.load(f)["traceEvents"]
                      if e.get("ph") == "X"}

    def end(value):
        return events[value]["ts"] + events[value]["dur"]

    waits, copies, starts = [], [], []
    for producer, piece, copy, used in hops:
        made = end(piece) if piece in events else end(producer)  # a slice may be a view
        waits.append(events[copy]["ts"] - made)
        copies.append(events[copy]["dur"])
        starts.append(events[used]["ts"] - made)
    median = statistics.median
    print(f"{args.rows * args.size * 4 // 1024} KiB hops: {len(hops)}, {args.large_copies}; makespan "
          f"{report['measured_makespan_s'] * 1e3:.2f} ms; load {os.getloadavg()[0]:.2f}")
    print(f"  copy waits    median {median(waits):9.0f} us, largest {max(waits):9.0f} us")
    print(f"  copy takes    median {median(copies):9.0f} us")
    print(f"  consumer at   median {median(starts):9.0f} us, largest {max(starts):9.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())

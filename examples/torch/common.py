"""Shared driver of the examples: torch module -> Doppler -> run on 4 CPU devices."""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

import doppler  # noqa: E402


def relative_error(out, ref):
    """||out - ref|| / ||ref|| over every tensor of the (nested) outputs."""
    if isinstance(ref, torch.Tensor):
        return ((out.double() - ref.double()).norm() / ref.double().norm()).item()
    return max(relative_error(o, r) for o, r in zip(out, ref))


def check(make, devices=4, system="cpu4", policy="doppler"):
    """Runs the example through Doppler; returns (relative error, RunResult)."""
    module, inputs = make()
    with torch.no_grad():
        expected = module(*inputs)
    result = doppler.run(module, inputs, devices=devices, system=system, policy=policy,
                         repeat=1, check=True)
    return relative_error(result.outputs, expected), result


def main(make, name):
    parser = argparse.ArgumentParser(description=f"Runs the {name} example through Doppler.")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--system", default="cpu4")
    parser.add_argument("--policy", default="doppler")
    parser.add_argument("--mlir", help="write the exported doppler MLIR here")
    parser.add_argument("--gantt", help="write the placement's SVG Gantt chart here")
    parser.add_argument("--summary", action="store_true", help="print the placement summary")
    args = parser.parse_args()
    module, inputs = make()
    if args.mlir:
        with open(args.mlir, "w") as f:
            f.write(doppler.export(module, inputs))
    start = time.time()
    error, result = check(make, args.devices, args.system, args.policy)
    if args.summary:
        print(result.placement.summary())
    if args.gantt:
        result.placement.gantt_svg(args.gantt)
    print(f"{name}: {args.devices} devices ({args.system}): relative error vs torch {error:.3g}, "
          f"runtime vs interpreter {result.max_rel_error:.3g}; makespan measured "
          f"{result.measured_makespan:.1f} us, predicted {result.predicted_makespan:.1f} us "
          f"({time.time() - start:.1f} s)")
    return 0 if error <= 1e-4 else 1

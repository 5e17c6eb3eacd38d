#!/usr/bin/env python3
"""Decomposition benchmark: parts=auto against uniform parts (issue 30).

For every program (the examples, and zoo models exported by the PyTorch
frontend with --zoo), every system and every device count D, runs
doppler-pipeline with parts=auto and with uniform parts 1, 2, 4, 8, 16
under the same placement budget and prints one markdown table: the
simulated makespan after placement (and its ratio to auto's), the placed op
count, the transfers, and the decomposition's own time (doppler-decompose
alone, after doppler-annotate-costs). With --measure, programs placed for a
CPU system are also run by doppler-run (median of --repeat runs), measured
beside predicted.

    python3 scripts/decompose_table.py                      # examples
    python3 scripts/decompose_table.py --quick              # smoke test
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 build/torch-venv/bin/python \\
        scripts/decompose_table.py --zoo resnet18 gpt2 --systems cpu4 --measure

System "host" is this machine's calibrated description for D devices (what
doppler.run uses by default; doppler-calibrate runs once per D and caches
it), so that the measured and the predicted columns speak of one machine:

    ... scripts/decompose_table.py --examples --zoo resnet18 gpt2 \\
        --systems host --devices 2 --parts auto 1 2 4 --measure
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["mlp", "matmul_chain", "llama_block"]
PLACED = re.compile(r"placed (\d+) ops on \d+ devices.*?predicted makespan ([0-9.e+-]+)")
MEASURED = re.compile(r"measured makespan: ([0-9.e+-]+) s")


def run(command, timeout):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return done


def export_zoo(name, directory):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import doppler
    from doppler import zoo

    model, args = zoo.build(name)
    path = os.path.join(directory, f"{name}.mlir")
    with open(path, "w") as f:
        f.write(doppler.export(model, args))
    return path


def resolve_system(system, devices):
    """A preset or file as given; "host": this machine's calibrated
    description for `devices` CPU devices (doppler.host)."""
    if system != "host":
        return system
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from doppler import host
    return host.host_system(devices)


def place(opt, source, system, devices, parts, budget, output, timeout):
    options = f"system={system} devices={devices} parts={parts}"
    if budget is not None:
        options += f" budget-evaluations={budget}"
    done = run([opt, source, f"--doppler-pipeline={options}", "-o", output], timeout)
    match = PLACED.search(done.stderr)
    if not match:
        raise RuntimeError(f"no placement remark for {source} {options}:\n{done.stderr}")
    with open(output) as f:
        transfers = f.read().count("doppler.transfer ")
    return int(match.group(1)), float(match.group(2)), transfers


def decompose_seconds(opt, source, system, devices, parts, timeout):
    start = time.perf_counter()
    run([opt, source, f"--doppler-annotate-costs=system={system}",
         f"--doppler-decompose=parts={parts} system={system} devices={devices}",
         "-o", os.devnull], timeout)
    return time.perf_counter() - start


def measure(runner, placed, repeat, timeout):
    done = run([runner, placed, "--repeat", str(repeat)], timeout)
    match = MEASURED.search(done.stdout)
    return float(match.group(1)) if match else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--examples", nargs="*", default=EXAMPLES)
    parser.add_argument("--zoo", nargs="*", default=[],
                        help="zoo models to export (needs torch; doppler.zoo names)")
    parser.add_argument("--systems", nargs="*", default=["h100x8", "cpu4"])
    parser.add_argument("--devices", nargs="*", type=int, default=[2, 4, 8])
    parser.add_argument("--parts", nargs="*", default=["auto", "1", "2", "4", "8", "16"])
    parser.add_argument("--budget", type=int, default=None,
                        help="budget-evaluations for every placement (default: the pipeline's)")
    parser.add_argument("--measure", action="store_true",
                        help="run the programs placed for cpu systems with doppler-run")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: the mlp at D = 2 on cpu4, parts auto and 4")
    args = parser.parse_args(argv)
    if args.quick:
        args.examples, args.zoo, args.systems = ["mlp"], [], ["cpu4"]
        args.devices, args.parts, args.budget = [2], ["auto", "4"], 0
    opt = os.path.join(args.build, "bin", "doppler-opt")
    runner = os.path.join(args.build, "bin", "doppler-run")

    with tempfile.TemporaryDirectory(prefix="doppler-decompose-table-") as tmp:
        # Zoo models are exported when their turn comes (a model that does
        # not export is a row saying why, and the others still run).
        sources = [(name, os.path.join(ROOT, "examples", f"{name}.mlir"))
                   for name in args.examples]
        sources += [(name, None) for name in args.zoo]
        header = ("| program | system | D | parts | makespan | / auto | ops | "
                  "transfers | decompose s |" + (" measured s | measured / predicted |"
                                                  if args.measure else ""))
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
        failed = []
        for name, source in sources:
            if source is None:
                try:
                    source = export_zoo(name, tmp)
                except Exception as e:  # noqa: BLE001 - reported, the others go on
                    reason = " ".join(str(e).split())[:200]
                    print(f"| {name} | - | - | export failed: {reason} |", flush=True)
                    failed.append(name)
                    continue
            for system in args.systems:
                for devices in args.devices:
                    rows, auto = [], None
                    description = resolve_system(system, devices)
                    for parts in args.parts:
                        placed = os.path.join(tmp, "placed.mlir")
                        ops, makespan, transfers = place(opt, source, description,
                                                         devices, parts, args.budget,
                                                         placed, args.timeout)
                        seconds = decompose_seconds(opt, source, description, devices,
                                                    parts, args.timeout)
                        if parts == "auto":
                            auto = makespan
                        row = [name, system, devices, parts, f"{makespan:.6g}", None, ops,
                               transfers, f"{seconds:.2f}"]
                        if args.measure:
                            measured = (measure(runner, placed, args.repeat, args.timeout)
                                        if system == "host" or system.startswith("cpu")
                                        else None)
                            # Costs are microseconds; doppler-run reports seconds.
                            row += ["-" if measured is None else f"{measured:.4g}",
                                    "-" if measured is None
                                    else f"{measured / (makespan * 1e-6):.2f}"]
                        rows.append((row, makespan))
                    for row, makespan in rows:
                        row[5] = "-" if not auto else f"{makespan / auto:.2f}"
                        print("| " + " | ".join(str(v) for v in row) + " |", flush=True)
        if failed:
            sys.exit(f"export failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()

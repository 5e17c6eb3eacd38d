#!/usr/bin/env python3
"""Tiny tasks on a model's parameters, with the run's weights in or beyond the cache.

A probe for the cost model (docs/results/zoo-speed.md, "Parameter-side
tasks"): the same 40 blocks of a 1x1 convolution (64 -> 64 channels, 16 KB
of weights), a batch norm and a ReLU on a 1x64x8x8 input, then an average
pool and one Linear(64, N) head whose N x 64 weights (N * 256 bytes) decide
how many bytes of weights a run reads. For each N the program is imported,
placed on this host's calibrated description for one device (as
bench/zoo_speed.py does) and run with `doppler-run --schedule`
(bench/zoo_schedule.py); per kind of task it prints the median measured
and predicted time of the tasks on the parameters alone (`rsqrt(var + eps)`:
fused a->a), of the batch norms (fused abcd,b,b,b,b->abcd: three parameter
vectors each) and of the head (a matrix-vector product, ab,cb->ac).
Weights the run reads once (the head's) evict the parameters between runs
when they are large enough: the tiny tasks then wait for memory.

    build/torch-venv/bin/python bench/cold_params.py 4000 16000 32000 90000
"""

import argparse
import collections
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

import zoo_schedule  # noqa: E402
import zoo_speed  # noqa: E402

# The tasks reported: their op's spec in the schedule's task name.
PROBED = {"a->a": "rsqrt on a parameter", "abcd,b,b,b,b->abcd": "batch norm",
          "ab,cb->ac": "the head"}


def probe_model(head, seed):
    """(module, inputs): 40 conv/BN/ReLU blocks and a Linear(64, head)."""
    import torch
    torch.manual_seed(seed)
    layers = []
    for _ in range(40):
        norm = torch.nn.BatchNorm2d(64)
        norm.running_var.uniform_(0.5, 1.5)
        norm.running_mean.uniform_(-0.1, 0.1)
        layers += [torch.nn.Conv2d(64, 64, 1, bias=False), norm, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(64, head))
    return model.eval(), (torch.randn(1, 64, 8, 8),)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("heads", type=int, nargs="+",
                        help="the head's output features N (N * 256 bytes of weights)")
    parser.add_argument("--repeat", type=int, default=9, help="doppler-run --repeat")
    parser.add_argument("--rounds", type=int, default=2, help="runs of doppler-run per N")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="doppler-cold-params-")
    for head in args.heads:
        if head < 1:
            parser.error(f"a head of {head} features: expected at least 1")
        name = f"cold_params_{head}"
        zoo_speed.build = lambda _name, head=head: probe_model(head, args.seed)
        prepared = zoo_speed.Prepared(name, [1], directory)
        print(f"head {head} ({head * 256 / 1e6:.1f} MB of weights):")
        for round_ in range(args.rounds):
            path = os.path.join(directory, f"{name}.{round_}.json")
            schedule = zoo_schedule.run_schedule(prepared.placed[1], 1, prepared.arguments,
                                                 args.repeat, path)
            times = collections.defaultdict(list)
            for task in schedule["tasks"]:
                spec = task["name"].split(" ", 3)[2] if task["name"].count(" ") >= 2 else ""
                if task.get("worker") == "compute" and spec in PROBED:
                    times[spec].append((task["end_us"] - task["start_us"],
                                        task["predicted_us"]))
            line = "; ".join(
                f"{PROBED[spec]} {statistics.median(m for m, _ in v):.2f} us "
                f"(predicted {statistics.median(p for _, p in v):.2f})"
                for spec, v in sorted(times.items()))
            print(f"  round {round_ + 1}: makespan "
                  f"{schedule['measured_makespan_us']:.1f} us "
                  f"(predicted {schedule['predicted_makespan_us']:.1f}); {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

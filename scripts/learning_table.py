#!/usr/bin/env python3
"""Does learning pay? Issue 32's comparison on the held-out real programs.

For every held-out graph of scripts/real_programs.py's cache (or the
--graphs given), places with doppler-place and prints one markdown table:

- learned: the default learned policy's greedy pass (--policy doppler
  --budget-evaluations 0, the embedded model);
- CP, JA: the critical-path and join-aware heuristics; "better" is the
  lower of the two (the project's better heuristic);
- HEFT; rollout: the non-learned --policy rollout, greedy (budget 0);
- learned moves: --policy learned-moves (the better heuristic, then moves
  of the critical chain's neighbourhood ranked by their estimated makespan
  and the embedded move model, kept if the simulator says they improve,
  within its default budget of work; docs/Method.md section 12);
- SA = learned time, SA 60 s: simulated annealing from the better
  heuristic's placement (--policy BETTER --budget-ms T) for the learned
  pass's own placement time, and for 60 s;
- the lower bound max(critical path of compute, total compute / D);
- "captured": (better - learned) / (better - SA 60 s), the share of 60 s
  of annealing's gain over the better heuristic that the learned greedy
  pass gets, where that gain is 2% or more; "captured (moves)" the same for
  the learned moves.

Times are doppler-place's own "seconds" (placement only, graph loading
excluded), on one core (OMP_NUM_THREADS=1).

    OMP_NUM_THREADS=1 python3 scripts/learning_table.py \\
        --output docs/results/learning-table.md
    python3 scripts/learning_table.py --quick        # smoke test, seconds
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CACHE = os.path.join(ROOT, "build", "real-programs")


def place(tool, graph, devices, policy, timeout, budget_ms=None, model=None):
    command = [tool, graph, "--devices", str(devices), "--policy", policy, "--json"]
    if budget_ms:
        command += ["--budget-ms", str(budget_ms)]
    elif policy != "learned-moves":
        command += ["--budget-evaluations", "0"]
    if model:
        command += ["--model", model]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    return {"makespan": report["makespan"], "seconds": report["seconds"],
            "lower_bound": report["lower_bound"], "nodes": report["nodes"]}


def held_out_graphs(cache, devices, uniform):
    path = os.path.join(cache, "manifest.json")
    if not os.path.exists(path):
        sys.exit(f"error: {path} not found: run scripts/real_programs.py first")
    with open(path) as f:
        manifest = json.load(f)
    graphs = [(os.path.join(cache, e["path"]), e["devices"], e["model"], e["system"])
              for e in manifest["graphs"]
              if e["split"] == "held-out" and e["devices"] in devices
              and e.get("uniform", False) == uniform]
    if not graphs:
        sys.exit(f"error: no held-out graphs at D = {devices} in {path}")
    return graphs


def row_for(tool, graph, devices, anneal_seconds, timeout, model):
    r = {name: place(tool, graph, devices, policy, timeout, model=model if
                     policy == "doppler" else None)
         for name, policy in [("learned", "doppler"), ("cp", "critical-path"),
                              ("ja", "join-aware"), ("heft", "heft"),
                              ("rollout", "rollout"), ("moves", "learned-moves")]}
    better = "cp" if r["cp"]["makespan"] <= r["ja"]["makespan"] else "ja"
    policy = "critical-path" if better == "cp" else "join-aware"
    learned_ms = max(1, round(r["learned"]["seconds"] * 1000))
    r["sa_same"] = place(tool, graph, devices, policy, timeout, budget_ms=learned_ms)
    r["sa_long"] = place(tool, graph, devices, policy, timeout,
                         budget_ms=round(anneal_seconds * 1000))
    r["better"] = dict(r[better], name=better.upper())
    return r


def fmt(value):
    return f"{value:.6g}"


def ratio(a, b):
    return f"{a / b:.3f}"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--cache", default=DEFAULT_CACHE)
    parser.add_argument("--devices", nargs="*", type=int, default=[8, 16])
    parser.add_argument("--graphs", nargs="*", default=None,
                        help="graph files instead of the cache's held-out set")
    parser.add_argument("--uniform", action="store_true",
                        help="the cache's parts=D decompositions, not the pipeline's")
    parser.add_argument("--anneal-seconds", type=float, default=60)
    parser.add_argument("--model", default=None, help="a model file (default: embedded)")
    parser.add_argument("--output", default=None, help="also write the table here")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: examples/llama_block.mlir on 2 devices, 0.2 s of annealing")
    args = parser.parse_args(argv)
    tool = os.path.join(args.build, "bin", "doppler-place")
    if args.quick:
        args.graphs = [os.path.join(ROOT, "examples", "llama_block.mlir")]
        args.devices, args.anneal_seconds = [2], 0.2
    if args.graphs:
        graphs = [(g, d, os.path.splitext(os.path.basename(g))[0], "h100x4")
                  for g in args.graphs for d in args.devices]
    else:
        graphs = held_out_graphs(args.cache, args.devices, args.uniform)

    # The learned pass's times include loading LibTorch and the model, a
    # constant per process: measured on a 5-node graph, subtracted in the
    # time ratio (a compiler loads them once).
    tiny = os.path.join(ROOT, "examples", "mlp.mlir")
    load = sorted(place(tool, tiny, 2, "doppler", args.timeout, model=args.model)["seconds"]
                  for _ in range(3))[1]
    lines = ["| graph | D | nodes | lower bound | better heuristic | HEFT | rollout (s) | "
             "learned (s) | learned moves (s) | SA, learned's time | SA, %gs | "
             "learned / better | moves / better | SA %gs / better | captured | "
             "captured (moves) |" % (args.anneal_seconds, args.anneal_seconds),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print(lines[0], flush=True)
    print(lines[1], flush=True)
    learned_ratios, captured, small_gain, slower, time_ratios = [], [], [], [], []
    moves_ratios, moves_captured, moves_slower, moves_time_ratios = [], [], [], []
    started = time.time()
    for graph, devices, name, system in graphs:
        r = row_for(tool, graph, devices, args.anneal_seconds, args.timeout, args.model)
        better = r["better"]["makespan"]
        learned = r["learned"]["makespan"]
        long = r["sa_long"]["makespan"]
        gain = (better - long) / better
        learned_ratios.append(learned / better)
        moves = r["moves"]["makespan"]
        moves_ratios.append(moves / better)
        moves_time_ratios.append(r["moves"]["seconds"] / max(r["better"]["seconds"], 1e-6))
        if moves > better * (1 + 1e-9):
            moves_slower.append(f"{name} D={devices}")
        time_ratios.append(max(r["learned"]["seconds"] - load, 0) /
                           max(r["better"]["seconds"], 1e-6))
        if learned > better * (1 + 1e-9):
            slower.append(f"{name} D={devices}")
        if gain >= 0.02:
            share = (better - learned) / (better - long)
            captured.append(share)
            share_text = f"{share:.2f}"
            moves_share = (better - moves) / (better - long)
            moves_captured.append(moves_share)
            moves_share_text = f"{moves_share:.2f}"
        else:
            small_gain.append(f"{name} D={devices}")
            share_text = moves_share_text = f"- (gain {gain * 100:.1f}%)"
        line = (f"| {name} ({system}) | {devices} | {r['learned']['nodes']} | "
                f"{fmt(r['learned']['lower_bound'])} | {fmt(better)} ({r['better']['name']}) | "
                f"{fmt(r['heft']['makespan'])} | {fmt(r['rollout']['makespan'])} "
                f"({r['rollout']['seconds']:.2f}) | {fmt(learned)} "
                f"({r['learned']['seconds']:.2f}) | {fmt(moves)} "
                f"({r['moves']['seconds']:.2f}) | {fmt(r['sa_same']['makespan'])} | "
                f"{fmt(long)} | {ratio(learned, better)} | {ratio(moves, better)} | "
                f"{ratio(long, better)} | {share_text} | {moves_share_text} |")
        lines.append(line)
        print(line, flush=True)
    summary = [
        "",
        f"learned / better heuristic: geometric mean {geomean(learned_ratios):.3f} over "
        f"{len(learned_ratios)} (graph, D) pairs; above the better heuristic on "
        f"{len(slower)}{': ' + ', '.join(slower) if slower else ''}.",
        f"captured share of {args.anneal_seconds:g} s of annealing's gain: mean "
        + (f"{sum(captured) / len(captured):.2f} over {len(captured)} pairs "
           f"({', '.join(f'{c:.2f}' for c in captured)})" if captured
           else "- (no pair where annealing gains 2% or more)")
        + f"; gain under 2% on {len(small_gain)} pairs.",
        f"learned time (less {load:.2f} s of loading LibTorch and the model) / better "
        f"heuristic's time: median "
        f"{sorted(time_ratios)[len(time_ratios) // 2]:.1f}x, max {max(time_ratios):.1f}x.",
        f"learned moves / better heuristic: geometric mean {geomean(moves_ratios):.3f}; "
        f"above the better heuristic on {len(moves_slower)}"
        f"{': ' + ', '.join(moves_slower) if moves_slower else ''}; captured share of "
        f"{args.anneal_seconds:g} s of annealing's gain: "
        + (f"geometric mean {geomean([max(c, 1e-9) for c in moves_captured]):.2f}, "
           f"mean {sum(moves_captured) / len(moves_captured):.2f} over "
           f"{len(moves_captured)} pairs ({', '.join(f'{c:.2f}' for c in moves_captured)})"
           if moves_captured else "-")
        + f"; time / better heuristic's time: median "
        f"{sorted(moves_time_ratios)[len(moves_time_ratios) // 2]:.1f}x, max "
        f"{max(moves_time_ratios):.1f}x.",
        f"wall time {time.time() - started:.0f} s on {platform.node() or 'this machine'}; "
        f"load average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}.",
    ]
    for line in summary[1:]:
        print(line)
    if args.output:
        with open(args.output + ".tmp", "w") as f:
            f.write("\n".join(lines + summary) + "\n")
        os.replace(args.output + ".tmp", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

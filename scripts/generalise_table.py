#!/usr/bin/env python3
"""Generalisation across systems (issue 32): a model trained on one system
description places on another without retraining, against one trained there.

    scripts/generalise_table.py [--pairs SRC:D>DST:D ...] [--episodes IL,RL]
                                [--out FILE.md] [--build DIR] [--work DIR]

For each description SYSTEM:D named in --pairs (default h100x4:4 >
h100x8:8, one node to two: h100x8:8 > h100x8-2n:16) it trains one model
with the same recipe, episodes and seed: scripts/train_default_model.sh's
(generated chain, FFNN and transformer graphs, --generate 150
--generate-seed 20261 --generate-max-nodes 240, imitation then simulator RL,
the join and lookahead priors, --regression-weight 3, seed 7), at that
description's device count only, plus the training split of the real
programs decomposed and costed for that description (docs/Method.md
section 10; scripts/real_programs.py makes the ones the cache lacks, from
its exported programs). --episodes scales the recipe (default its
4000,3000).

Then, per pair, on the target's device count, the greedy placements
(doppler-train --compare: the model's pass with --budget-evaluations 0) of
the model trained on the source, the model trained on the target and the
embedded default model, on held-out graphs: random layered DAGs (the
family no model trains on; --eval-generate graphs of --eval-seed 99) and
the held-out real programs decomposed for the target. Reported: each
model's geometric-mean makespan relative to the better of critical path
and join-aware, and the source model's relative to the target model's
(geometric mean, worst, how many graphs above it by more than 1%). For a
target with nodes (h100x8-2n) the programs' placements are also judged by
the network simulator (doppler-place --assignment --network: NIC and link
contention, the pairs' links), against the better heuristic placed with
--network (pair-aware): the reference simulator, which the models train
and are compared on, prices every cross-device edge alike and so cannot
tell one node from two.

Writes FILE.md and FILE.json (default docs/results/generalise.md) with the
command, the commit, the load and the wall time; the models stay in --work.
"""
import argparse
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPE = ["--generate-families", "chain,ffnn,transformer", "--stages", "il,sim-rl",
          "--lr", "1e-3,1e-3", "--epsilon", "1.0,0", "--sample-actions",
          "--episodes-per-update", "1,8", "--critical-path-baseline",
          "--architecture", "slim,join=1,lookahead=1", "--regression-weight", "3",
          "--evaluation-pairs", "128", "--no-progress"]


def run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"error: {shlex.join(command)} failed:\n{done.stderr.strip()[-2000:]}")
    return done.stdout


def parse_description(text):
    system, _, devices = text.partition(":")
    if not system or not devices.isdigit() or int(devices) < 1:
        sys.exit(f"error: '{text}' is not SYSTEM:D (e.g. h100x8:8)")
    return system, int(devices)


def parse_pair(text):
    source, sep, target = text.partition(">")
    if not sep:
        sys.exit(f"error: pair '{text}' is not SRC:D>DST:D (e.g. h100x4:4>h100x8:8)")
    return parse_description(source), parse_description(target)


def manifest_graphs(cache, split, system, devices):
    path = os.path.join(cache, "manifest.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        entries = json.load(f)["graphs"]
    return sorted(os.path.join(cache, e["path"]) for e in entries
                  if e["split"] == split and e["system"] == system
                  and e["devices"] == devices and not e.get("uniform"))


def training_programs(args, system, devices):
    """The real programs' training split for SYSTEM:D: from the cache, or
    made by scripts/real_programs.py into WORK/real-programs (the cache's
    exported programs reused) when the cache has none."""
    if args.no_programs:
        return []
    graphs = manifest_graphs(args.cache, "train", system, devices)
    if graphs:
        return graphs
    own = os.path.join(args.work, "real-programs")
    os.makedirs(own, exist_ok=True)
    programs = os.path.join(own, "programs")
    if not os.path.exists(programs):
        os.symlink(os.path.abspath(os.path.join(args.cache, "programs")), programs)
    run([sys.executable, os.path.join(ROOT, "scripts", "real_programs.py"), "--build",
         args.build, "--cache", own, "--split", "train", "--targets", f"{system}:{devices}"])
    return manifest_graphs(own, "train", system, devices)


def train(args, system, devices):
    """The recipe's model for SYSTEM:D: (path, seconds, program count)."""
    il, rl = args.episodes
    tag = f"{system}.d{devices}.e{il}-{rl}.s{args.seed}"
    model = os.path.join(args.work, f"model.{tag}.pt")
    programs = training_programs(args, system, devices)
    if os.path.exists(model) and not args.retrain:
        print(f"-- {model}: kept (--retrain trains it anew)", flush=True)
        return model, None, len(programs)
    every = max(4, min(500, (il + rl) // 8))
    print(f"-- training on {system}, D = {devices}: {args.generate} generated graphs and "
          f"{len(programs)} programs, {il},{rl} episodes", flush=True)
    begin = time.monotonic()
    run([f"{args.build}/bin/doppler-train", "--generate", str(args.generate),
         "--generate-seed", "20261", "--generate-max-nodes", str(args.generate_max_nodes),
         *programs, "--devices", str(devices), "--system", system,
         "--episodes", f"{il},{rl}", "--seed", str(args.seed), "--evaluate-every", str(every),
         "--checkpoint", model + ".ckpt", "--checkpoint-every", str(max(every, 2000)),
         "--log", os.path.join(args.work, f"model.{tag}.jsonl"), *RECIPE, "-o", model])
    return model, time.monotonic() - begin, len(programs)


def compare(args, model, devices, graphs):
    """{graph: (critical path, join-aware, learned)} and the seconds the
    greedy placements took, by doppler-train --compare."""
    source = graphs or ["--generate", str(args.eval_generate), "--generate-seed",
                        str(args.eval_seed), "--generate-families", "random"]
    out = run([f"{args.build}/bin/doppler-train", "--compare", model, *source,
               "--devices", str(devices)])
    rows, seconds = {}, None
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 7 and fields[1] == str(devices):
            try:
                rows[fields[0]] = tuple(float(x) for x in fields[2:5])
            except ValueError:
                continue
        elif line.startswith("greedy placements took"):
            seconds = float(line.split()[3])
    if not rows:
        sys.exit(f"error: no rows in doppler-train --compare {model}'s output:\n{out}")
    return rows, seconds


def network_makespans(args, model, graph, system, devices):
    """The model's greedy placement of `graph` on the network simulator,
    and the better of critical path and join-aware placed with --network."""
    place = f"{args.build}/bin/doppler-place"
    common = ["--devices", str(devices), "--system", system, "--json"]
    assignment = os.path.join(args.work, "assignment.txt")
    run([place, graph, "--policy", "doppler", "--model", model, "--budget-evaluations", "0",
         "-o", assignment, *common])
    learned = json.loads(run([place, graph, "--assignment", assignment, "--network",
                              *common]))["network_makespan"]
    better = min(json.loads(run([place, graph, "--policy", policy, "--network",
                                 *common]))["network_makespan"]
                 for policy in ("critical-path", "join-aware"))
    return learned, better


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summarise(models, rows):
    """Per model the geometric mean over graphs of learned / better
    heuristic; source over target: geometric mean, worst, above by 1%."""
    out = {}
    for name in models:
        out[name] = geomean([r[name][2] / min(r[name][0], r[name][1]) for r in rows.values()])
    ratios = {g: r["source"][2] / r["target"][2] for g, r in rows.items()}
    out["source / target"] = geomean(list(ratios.values()))
    out["worst source / target"] = max(ratios.values())
    out["worst graph"] = max(ratios, key=ratios.get)
    out["above target by 1%"] = sum(1 for v in ratios.values() if v > 1.01)
    out["graphs"] = len(ratios)
    return out


def evaluate_pair(args, source, target, models):
    (tsys, tdev) = target
    result = {"source": f"{source[0]}:{source[1]}", "target": f"{tsys}:{tdev}", "sets": {}}
    held_out = manifest_graphs(args.cache, "held-out", tsys, tdev)
    sets = [("random DAGs", [])] + ([("held-out programs", held_out)] if held_out else [])
    for label, graphs in sets:
        per_model, seconds = {}, {}
        for name, model in models.items():
            per_model[name], seconds[name] = compare(args, model, tdev, graphs)
        rows = {g: {name: per_model[name][g] for name in models} for g in per_model["source"]}
        summary = summarise(models, rows)
        summary["seconds"] = seconds
        result["sets"][label] = {"summary": summary, "rows": rows}
        print(f"   {result['source']} -> {result['target']}, {label}: " + ", ".join(
            f"{k} {v:.4f}" for k, v in summary.items() if isinstance(v, float)), flush=True)
    if held_out and re.search(r"-[0-9]+n$", tsys) and not args.no_network:
        network = {}
        for graph in held_out:
            s, better = network_makespans(args, models["source"], graph, tsys, tdev)
            t, _ = network_makespans(args, models["target"], graph, tsys, tdev)
            network[os.path.basename(graph)] = {"source": s, "target": t, "better": better}
        result["network"] = network
    return result


def report(args, results, trained, seconds, load_start):
    load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    command = "scripts/generalise_table.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    il, rl = args.episodes
    lines = ["# Generalisation across system descriptions (issue 32)", "",
             f"Made by `{command.strip()}` at commit {commit} in {seconds:.0f} s on "
             f"{platform.node() or 'this machine'} (2-core VM shared with other jobs; load "
             f"average {load_start} at the start, {load_end} at the end). One model per "
             f"description, same recipe (scripts/train_default_model.sh's at one device "
             f"count), {il},{rl} episodes, seed {args.seed}, {args.generate} generated "
             f"graphs plus the description's training programs; greedy placements "
             f"(doppler-train --compare), makespans on the reference simulator.", "",
             "| description | D | programs trained on | training seconds |", "|---|---|---|---|"]
    for (system, devices), (model, secs, programs) in trained.items():
        lines.append(f"| {system} | {devices} | {programs} | "
                     f"{'-' if secs is None else f'{secs:.0f}'} |")
    lines += ["", "Geometric means over each set's graphs: each model's makespan over the "
              "better heuristic's (critical path, join-aware), and the model trained on the "
              "source over the model trained on the target:", "",
              "| source > target | held-out set | graphs | source / better | "
              "target / better | default / better | source / target | worst source / "
              "target | above target by 1% |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for label, s in r["sets"].items():
            s = s["summary"]
            lines.append(f"| {r['source']} > {r['target']} | {label} | {s['graphs']} | "
                         f"{s['source']:.4f} | {s['target']:.4f} | {s['default']:.4f} | "
                         f"{s['source / target']:.4f} | {s['worst source / target']:.4f} "
                         f"({s['worst graph']}) | {s['above target by 1%']} |")
    for r in results:
        if "network" not in r:
            continue
        lines += ["", f"{r['source']} > {r['target']}, the held-out programs on the network "
                  "simulator (NIC and link contention; the better heuristic placed with "
                  "--network, pair-aware):", "",
                  "| graph | source / better | target / better | source / target |",
                  "|---|---|---|---|"]
        for graph, n in r["network"].items():
            lines.append(f"| {graph} | {n['source'] / n['better']:.4f} | "
                         f"{n['target'] / n['better']:.4f} | {n['source'] / n['target']:.4f} |")
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump({"command": command.strip(), "commit": commit, "seconds": seconds,
                   "trained": {f"{k[0]}:{k[1]}": {"model": v[0], "seconds": v[1],
                                                  "programs": v[2]}
                               for k, v in trained.items()},
                   "results": results}, f, indent=1)
        f.write("\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", nargs="+", default=["h100x4:4>h100x8:8",
                                                        "h100x8:8>h100x8-2n:16"])
    parser.add_argument("--episodes", default="4000,3000", help="IL,RL (the recipe's)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--generate", type=int, default=150)
    parser.add_argument("--generate-max-nodes", type=int, default=240)
    parser.add_argument("--eval-generate", type=int, default=100)
    parser.add_argument("--eval-seed", type=int, default=99)
    parser.add_argument("--no-programs", action="store_true",
                        help="train on the generated graphs only")
    parser.add_argument("--no-network", action="store_true")
    parser.add_argument("--retrain", action="store_true")
    parser.add_argument("--build", default=os.environ.get("DOPPLER_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--cache", default=os.path.join(ROOT, "build", "real-programs"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "generalise"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "results",
                                                      "generalise.md"))
    args = parser.parse_args()
    try:
        il, rl = (int(x) for x in args.episodes.split(","))
    except ValueError:
        sys.exit(f"error: --episodes '{args.episodes}' is not IL,RL (e.g. 4000,3000)")
    if il < 1 or rl < 1:
        sys.exit("error: --episodes needs at least 1 episode in each stage")
    args.episodes = (il, rl)
    pairs = [parse_pair(p) for p in args.pairs]
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    load_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.monotonic()
    trained = {}
    for description in dict.fromkeys(d for pair in pairs for d in pair):
        trained[description] = train(args, *description)
    results = []
    for source, target in pairs:
        models = {"source": trained[source][0], "target": trained[target][0],
                  "default": "default"}
        results.append(evaluate_pair(args, source, target, models))
    report(args, results, trained, time.monotonic() - started, load_start)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The paper's comparison on the shared graphs (issue 15), regenerated.

    scripts/paper_table.sh [--devices D] [--episodes E] [--seed S]
                           [--out DIR] [--build DIR] [GRAPH...]

For each graph (default: the three graphs of data/reference/graphs and a
small MLP program, decomposed, so that Doppler-SYS has a program to run) on
D devices, it measures with the simulator (reference semantics):

  critical-path, join-aware      the heuristics (doppler-place --policy X)
  default (zero-shot)            the embedded model's greedy placement
                                 (--budget-evaluations 0)
  default (budgeted)             doppler-place's default: the learned
                                 policy's greedy rollout and both heuristics
                                 as starts, the best refined (about 1 s)
  GDP, Placeto                   trained per graph (doppler-train --baseline)
  Doppler-IL                     imitation only (--stages il)
  Doppler-SIM                    imitation then RL on the simulator
                                 (scripts/train_per_graph.sh's recipe)
  Doppler-SYS                    imitation, simulator RL, then RL on the
                                 measured makespan of CPU runs (.mlir only)

Every learned method gets the same E episodes (one episode: one complete
placement of the graph; Doppler-SIM: 1/4 imitation, Doppler-SYS: 1/4
imitation, 1/2 simulator, 1/4 runs); each reports the best placement it
simulated during training (the simulator judges all of them alike; for
Doppler-SYS the best simulated before its real runs and its final greedy
placement). Writes DIR/table.md, DIR/results.json, and per graph two SVG
sample-efficiency curves (best makespan so far against episodes and
against wall time). Deterministic for a seed except the wall times.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"error: {shlex.join(command)} failed:\n{result.stderr.strip()}")
    return result.stdout


def place(build, graph, devices, *args):
    out = run([f"{build}/bin/doppler-place", graph, "--devices", str(devices),
               "--json", *args])
    return json.loads(out)


def read_log(path, makespan_key="makespan"):
    """Per episode (episode from 1, seconds since training began, makespan,
    stage) from a JSON-lines log: doppler-train's training log (whose
    "seconds" is the episode's own time) or a --baseline curve."""
    rows, elapsed = [], 0.0
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if "baseline" in row:
                rows.append((row["episode"], row["seconds"], row[makespan_key], ""))
            elif "episode" in row and "stage" in row and makespan_key in row:
                elapsed += row["seconds"]
                rows.append((row["episode"] + 1, elapsed, row[makespan_key], row["stage"]))
    return rows


def best_so_far(rows):
    best, out = math.inf, []
    for episode, seconds, makespan, _ in rows:
        best = min(best, makespan)
        out.append((episode, seconds, best))
    return out


def svg_plot(path, title, xlabel, series, reference):
    """A line chart: series = [(name, colour, [(x, y)])], y relative to
    `reference` (critical path's makespan)."""
    width, height, left, right, top, bottom = 640, 400, 70, 170, 40, 50
    points = [(x, y / reference) for _, _, pts in series for x, y in pts]
    if not points:
        return
    xmax = max(x for x, _ in points) or 1
    ymin = min(min(y for _, y in points), 1.0)
    ymax = max(max(y for _, y in points), 1.0)
    pad = (ymax - ymin) * 0.05 or 0.05
    ymin, ymax = ymin - pad, ymax + pad

    def sx(x):
        return left + (width - left - right) * x / xmax

    def sy(y):
        return top + (height - top - bottom) * (ymax - y) / (ymax - ymin)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    for i in range(6):
        y = ymin + (ymax - ymin) * i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.3f}</text>')
        x = xmax * i / 5
        out.append(f'<text x="{sx(x):.1f}" y="{height - bottom + 18}" text-anchor="middle">{x:.4g}</text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{sy(1.0):.1f}" y2="{sy(1.0):.1f}" '
               f'stroke="black" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{width - right + 4}" y="{sy(1.0) + 4:.1f}">critical path</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(top + height - bottom) / 2})">best makespan / critical path</text>')
    for i, (name, colour, pts) in enumerate(series):
        if not pts:
            continue
        path_points = " ".join(f"{sx(x):.1f},{sy(y / reference):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path_points}"/>')
        ly = top + 20 + 18 * i
        out.append(f'<line x1="{width - right + 10}" x2="{width - right + 30}" y1="{ly}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 35}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def default_graphs(work):
    shared = os.path.join(ROOT, "data", "reference", "graphs")
    graphs = [os.path.join(shared, g) for g in
              ("chain_mm_112nodes.txt", "ffnn_192nodes.txt", "transformer_block_215nodes.txt")]
    return graphs


def small_program(build, work):
    """A small MLP program decomposed into 2 parts and costed for cpu4: a
    graph Doppler-SYS can run."""
    source = os.path.join(work, "mlp_small.mlir")
    with open(source, "w") as f:
        f.write(run([sys.executable, os.path.join(ROOT, "examples", "generate_examples.py"),
                     "mlp", "--batch", "16", "--d-in", "32", "--hidden", "64", "--d-out", "24"]))
    decomposed = os.path.join(work, "mlp_small.decomposed.mlir")
    run([f"{build}/bin/doppler-opt", source, "--doppler-decompose=parts=2",
         "--doppler-annotate-costs=system=cpu4", "-o", decomposed])
    return decomposed


DOPPLER_RECIPE = ["--architecture", "slim,join=1,lookahead=1", "--sample-actions",
                  "--prior-lr-scale", "300", "--no-progress"]


def train_doppler(build, graph, devices, seed, stages, episodes, extra, work, tag):
    model = os.path.join(work, f"{tag}.pt")
    log = os.path.join(work, f"{tag}.jsonl")
    n = len(stages)
    lr = ",".join(["1e-3"] * n)
    epsilon = ",".join(["1.0"] + ["0"] * (n - 1))
    per_update = ",".join(["1"] + ["8"] * (n - 1))
    begin = time.monotonic()
    run([f"{build}/bin/doppler-train", graph, "--devices", str(devices),
         "--stages", ",".join(stages), "--episodes", ",".join(map(str, episodes)),
         "--lr", lr, "--epsilon", epsilon, "--episodes-per-update", per_update,
         "--seed", str(seed), "--evaluate-every", "50", "--log", log, "-o", model,
         *DOPPLER_RECIPE, *extra])
    seconds = time.monotonic() - begin
    rows = read_log(log)
    greedy = place(build, graph, devices, "--policy", "doppler", "--model", model,
                   "--budget-evaluations", "0")["makespan"]
    return rows, greedy, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graphs", nargs="*")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    parser.add_argument("--build", default=os.environ.get("DOPPLER_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--no-program", action="store_true",
                        help="without graphs: leave out the MLP program (and Doppler-SYS)")
    args = parser.parse_args()
    if args.episodes < 8:
        sys.exit("error: --episodes must be at least 8")
    build, devices, episodes, seed = args.build, args.devices, args.episodes, args.seed
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="doppler-paper-")
    graphs = args.graphs or default_graphs(work)
    if not args.graphs and not args.no_program:
        graphs.append(small_program(build, work))
    started = time.monotonic()
    results = []
    for graph in graphs:
        name = os.path.basename(graph).rsplit(".", 1)[0]
        is_program = graph.endswith(".mlir")
        print(f"== {name} on {devices} devices", flush=True)
        row = {"graph": name, "devices": devices, "episodes": episodes}
        cp = place(build, graph, devices, "--policy", "critical-path")
        row["critical-path"] = cp["makespan"]
        row["lower-bound"] = cp["lower_bound"]
        row["join-aware"] = place(build, graph, devices, "--policy", "join-aware")["makespan"]
        row["default (zero-shot)"] = place(build, graph, devices, "--budget-evaluations", "0")["makespan"]
        budgeted = place(build, graph, devices)
        row["default (budgeted)"] = budgeted["makespan"]
        row["default (budgeted) seconds"] = budgeted["seconds"]
        curves = {}
        for baseline in ("gdp", "placeto"):
            log = os.path.join(work, f"{name}.{baseline}.jsonl")
            begin = time.monotonic()
            run([f"{build}/bin/doppler-train", "--baseline", baseline, graph,
                 "--devices", str(devices), "--episodes", str(episodes),
                 "--seed", str(seed), "--log", log])
            label = "GDP" if baseline == "gdp" else "Placeto"
            rows = read_log(log)
            row[label] = min(r[2] for r in rows)
            row[f"{label} seconds"] = time.monotonic() - begin
            curves[label] = best_so_far(rows)
        il_rows, il_greedy, il_seconds = train_doppler(
            build, graph, devices, seed, ["il"], [episodes], [], work, f"{name}.il")
        row["Doppler-IL"] = min(min(r[2] for r in il_rows), il_greedy)
        row["Doppler-IL seconds"] = il_seconds
        row["Doppler-IL greedy"] = il_greedy
        curves["Doppler-IL"] = best_so_far(il_rows)
        quarter = episodes // 4
        sim_rows, sim_greedy, sim_seconds = train_doppler(
            build, graph, devices, seed, ["il", "sim-rl"], [quarter, episodes - quarter],
            [], work, f"{name}.sim")
        row["Doppler-SIM"] = min(min(r[2] for r in sim_rows), sim_greedy)
        row["Doppler-SIM seconds"] = sim_seconds
        row["Doppler-SIM greedy"] = sim_greedy
        curves["Doppler-SIM"] = best_so_far(sim_rows)
        if is_program:
            sys_rows, sys_greedy, sys_seconds = train_doppler(
                build, graph, devices, seed, ["il", "sim-rl", "real-rl"],
                [quarter, episodes - 2 * quarter, quarter],
                ["--backend", "cpu", "--repeat", "2"], work, f"{name}.sys")
            simulated = [r for r in sys_rows if r[3] != "real-rl"]
            row["Doppler-SYS"] = min(min(r[2] for r in simulated), sys_greedy)
            row["Doppler-SYS seconds"] = sys_seconds
            row["Doppler-SYS greedy"] = sys_greedy
        results.append(row)
        reference = row["critical-path"]
        colours = {"GDP": "#d62728", "Placeto": "#9467bd", "Doppler-IL": "#2ca02c",
                   "Doppler-SIM": "#1f77b4"}
        series = [(k, colours[k], [(e, m) for e, _, m in v]) for k, v in curves.items()]
        svg_plot(os.path.join(args.out, f"curve-episodes-{name}.svg"),
                 f"{name}, D = {devices}: best makespan against episodes", "episodes",
                 series, reference)
        series = [(k, colours[k], [(s, m) for _, s, m in v]) for k, v in curves.items()]
        svg_plot(os.path.join(args.out, f"curve-seconds-{name}.svg"),
                 f"{name}, D = {devices}: best makespan against wall time", "seconds",
                 series, reference)
        print("   " + ", ".join(f"{k} {v:.4g}" for k, v in row.items()
                                if isinstance(v, (int, float)) and "seconds" not in k
                                and k not in ("devices", "episodes")), flush=True)

    columns = ["critical-path", "join-aware", "Placeto", "GDP", "Doppler-IL",
               "Doppler-SIM", "Doppler-SYS", "default (zero-shot)", "default (budgeted)"]
    command = "scripts/paper_table.sh " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [f"# Placement on the shared graphs, D = {devices}",
             "",
             f"Made by `{command.strip()}` in {time.monotonic() - started:.0f} s "
             f"(2-core VM, shared with other jobs). Makespans relative to "
             f"critical-path's (lower is better; the simulator, reference "
             f"semantics); each learned method had {episodes} episodes and "
             f"reports the best placement it simulated; Doppler-SYS runs on "
             f"programs only (the CPU runtime measures its last quarter).",
             "",
             "| graph | " + " | ".join(columns) + " |",
             "|---|" + "---|" * len(columns)]
    for row in results:
        cells = []
        for c in columns:
            value = row.get(c)
            cells.append("-" if value is None else f"{value / row['critical-path']:.3f}")
        lines.append(f"| {row['graph']} | " + " | ".join(cells) + " |")
    lines += ["", "The trained Doppler models' greedy placements (the model written, "
              "keep-best by its periodic greedy evaluations), relative to critical-path's:", "",
              "| graph | Doppler-IL | Doppler-SIM | Doppler-SYS |", "|---|---|---|---|"]
    for row in results:
        cells = [row.get(f"{c} greedy") for c in ("Doppler-IL", "Doppler-SIM", "Doppler-SYS")]
        lines.append(f"| {row['graph']} | " + " | ".join(
            "-" if c is None else f"{c / row['critical-path']:.3f}" for c in cells) + " |")
    lines += ["", "Wall time per method (s):", "",
              "| graph | Placeto | GDP | Doppler-IL | Doppler-SIM | Doppler-SYS | default (budgeted) |",
              "|---|---|---|---|---|---|---|"]
    for row in results:
        cells = [row.get(f"{c} seconds") for c in
                 ("Placeto", "GDP", "Doppler-IL", "Doppler-SIM", "Doppler-SYS", "default (budgeted)")]
        lines.append(f"| {row['graph']} | " + " | ".join(
            "-" if c is None else f"{c:.1f}" for c in cells) + " |")
    lines += ["", "Curves: `curve-episodes-GRAPH.svg`, `curve-seconds-GRAPH.svg`.", ""]
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"command": command.strip(), "results": results}, f, indent=1)
        f.write("\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

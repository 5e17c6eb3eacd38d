#!/usr/bin/env python3
"""Writes a layered random DAG in the reference text format (METHOD.md
section 8) whose ready sets grow to thousands of nodes when placed in
critical-path order: the scale check of the learned placement.

    scripts/generate_wide_graph.py NODES [--seed S] > g.txt
    build/bin/doppler-place g.txt --devices 4 --policy doppler --budget-evaluations 0

Layers of 16 nodes; each node reads 1 to 3 nodes of the two previous layers;
compute costs 1000-100000, transfer costs 100-50000 (integers). The last
line-2 id is one unused input node, as the format lists input ids.
"""
import argparse
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int, help="node count (>= 17)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.nodes < 17:
        parser.error("nodes must be at least 17")
    rng = random.Random(args.seed)
    width = 16
    sources, targets = [], []
    for v in range(width, args.nodes):
        layer = v // width
        low, high = max(0, (layer - 2) * width), layer * width - 1
        for _ in range(rng.randint(1, 3)):
            sources.append(rng.randint(low, high))
            targets.append(v)
    out = sys.stdout
    out.write(f"{args.nodes + 1}\n{args.nodes}\n")
    out.write(", ".join(map(str, sources)) + "\n")
    out.write(", ".join(map(str, targets)) + "\n")
    for _ in range(args.nodes):
        out.write(f"{rng.randint(1000, 100000)},{rng.randint(100, 50000)}\n")


if __name__ == "__main__":
    main()

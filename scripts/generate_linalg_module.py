#!/usr/bin/env python3
"""Writes a linalg-on-tensors module of N ops for timing convert-linalg-to-doppler.

A chain of blocks, each `linalg.fill` (zero init) + `linalg.matmul` + a bias
`linalg.generic` (broadcast add) + an `exp` `linalg.generic`, on SIZExSIZE f32
tensors: 4 ops per block, so N/4 blocks.

    scripts/generate_linalg_module.py --ops 10000 > big.mlir
    time build/bin/doppler-opt big.mlir --convert-linalg-to-doppler=full=true -o /dev/null
"""
import argparse
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10000, help="linalg ops (multiple of 4)")
    parser.add_argument("--size", type=int, default=16, help="square tensor size")
    args = parser.parse_args()
    if args.ops < 4 or args.size < 1:
        parser.error("--ops must be >= 4 and --size >= 1")
    n = args.size
    t = f"tensor<{n}x{n}xf32>"
    v = f"tensor<{n}xf32>"
    out = sys.stdout
    out.write("#id = affine_map<(i, j) -> (i, j)>\n#row = affine_map<(i, j) -> (j)>\n")
    out.write(f"func.func @chain(%x: {t}, %w: {t}, %b: {v}) -> {t} {{\n")
    out.write("  %zero = arith.constant 0.0 : f32\n")
    cur = "%x"
    for k in range(args.ops // 4):
        out.write(f"  %e{k} = tensor.empty() : {t}\n")
        out.write(f"  %f{k} = linalg.fill ins(%zero : f32) outs(%e{k} : {t}) -> {t}\n")
        out.write(f"  %m{k} = linalg.matmul ins({cur}, %w : {t}, {t}) outs(%f{k} : {t}) -> {t}\n")
        out.write(f"  %a{k} = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = [\"parallel\", \"parallel\"]}}"
                  f" ins(%m{k}, %b : {t}, {v}) outs(%e{k} : {t}) {{\n"
                  f"  ^bb0(%p: f32, %q: f32, %o: f32):\n    %s = arith.addf %p, %q : f32\n    linalg.yield %s : f32\n  }} -> {t}\n")
        out.write(f"  %x{k} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [\"parallel\", \"parallel\"]}}"
                  f" ins(%a{k} : {t}) outs(%e{k} : {t}) {{\n"
                  f"  ^bb0(%p: f32, %o: f32):\n    %s = math.exp %p : f32\n    linalg.yield %s : f32\n  }} -> {t}\n")
        cur = f"%x{k}"
    out.write(f"  return {cur} : {t}\n}}\n")


if __name__ == "__main__":
    main()

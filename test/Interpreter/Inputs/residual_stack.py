#!/usr/bin/env python3
"""Writes a deep residual stack as doppler einsums: LAYERS x (matmul, bias
add, tanh, residual add) on SIZE x SIZE tensors, 4 * LAYERS einsums in all.
Used to check that doppler-decompose scales to large modules.

  residual_stack.py LAYERS SIZE
"""
import sys


def main():
    layers, size = int(sys.argv[1]), int(sys.argv[2])
    t = f"tensor<{size}x{size}xf32>"
    v = f"tensor<{size}xf32>"
    out = [f"func.func @stack(%x: {t}, %w: {t}, %b: {v}) -> {t} {{"]
    cur = "%x"
    for i in range(layers):
        out.append(f'  %m{i} = doppler.einsum "ij,jk->ik" join(mul) agg(add) ({cur}, %w) : ({t}, {t}) -> {t}')
        out.append(f'  %a{i} = doppler.einsum "ik,k->ik" join(add) (%m{i}, %b) : ({t}, {v}) -> {t}')
        out.append(f'  %g{i} = doppler.einsum "ik->ik" join(tanh) (%a{i}) : ({t}) -> {t}')
        out.append(f'  %r{i} = doppler.einsum "ik,ik->ik" join(add) (%g{i}, {cur}) : ({t}, {t}) -> {t}')
        cur = f"%r{i}"
    out.append(f"  return {cur} : {t}\n}}")
    print("\n".join(out))


if __name__ == "__main__":
    main()

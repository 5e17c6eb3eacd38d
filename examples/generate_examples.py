#!/usr/bin/env python3
"""Writes Doppler's example programs as doppler.einsum IR.

The committed examples/*.mlir come from this script at its default
(realistic) shapes; tests call it with small shapes so that the reference
interpreter and the CPU runtime can run them quickly. Standard library only.

  generate_examples.py mlp   [--batch 512 --d-in 1024 --hidden 4096 --d-out 1024]
  generate_examples.py chain [--size 4096]
  generate_examples.py llama [--seq 2048 --d-model 4096 --heads 32 --ffn 11008]
  generate_examples.py all --out-dir examples
"""

import argparse
import math
import os
import sys


def mlir_float(value):
    """Shortest exact decimal, with the '.' that MLIR float literals need."""
    text = repr(float(value))
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0" + ("e" + exponent if exponent else "")
    return text


def tensor(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


class Builder:
    """Accumulates the body of one func.func, naming values in order."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.lines = []
        self.counter = 0
        self.shapes = {}

    def fresh(self, hint):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def arg(self, name, shape):
        value = f"%{name}"
        self.shapes[value] = list(shape)
        return value

    def einsum(self, spec, join, inputs, shape, agg=None, scalar=None, hint="t",
               comment=None):
        out = self.fresh(hint)
        join_text = f"join({join}" + (f", {mlir_float(scalar)}" if scalar is not None else "") + ")"
        agg_text = f" agg({agg})" if agg else ""
        types = ", ".join(tensor(self.shapes[v], self.dtype) for v in inputs)
        if comment:
            self.lines.append(f"  // {comment}")
        self.lines.append(
            f'  {out} = doppler.einsum "{spec}" {join_text}{agg_text} '
            f"({', '.join(inputs)})\n      : ({types}) -> {tensor(shape, self.dtype)}")
        self.shapes[out] = list(shape)
        return out

    def slice(self, value, offsets, shape, hint="s"):
        out = self.fresh(hint)
        self.lines.append(
            f"  {out} = doppler.slice {value} [{', '.join(map(str, offsets))}]"
            f" : {tensor(self.shapes[value], self.dtype)} to {tensor(shape, self.dtype)}")
        self.shapes[out] = list(shape)
        return out

    def assemble(self, grid, blocks, shape, hint="a"):
        out = self.fresh(hint)
        types = ", ".join(tensor(self.shapes[b], self.dtype) for b in blocks)
        self.lines.append(
            f"  {out} = doppler.assemble [{', '.join(map(str, grid))}] ({', '.join(blocks)})"
            f"\n      : {types} -> {tensor(shape, self.dtype)}")
        self.shapes[out] = list(shape)
        return out

    def function(self, name, args, results, doc):
        arg_text = ",\n    ".join(f"{a}: {tensor(self.shapes[a], self.dtype)}" for a in args)
        res_text = ", ".join(tensor(self.shapes[r], self.dtype) for r in results)
        ret_types = ", ".join(tensor(self.shapes[r], self.dtype) for r in results)
        header = "".join(f"// {line}\n" if line else "//\n" for line in doc)
        return (f"{header}func.func @{name}(\n    {arg_text})\n    -> ({res_text}) {{\n"
                + "\n".join(self.lines)
                + f"\n  return {', '.join(results)} : {ret_types}\n}}\n")


def mlp(batch, d_in, hidden, d_out, dtype):
    b = Builder(dtype)
    x = b.arg("x", [batch, d_in])
    w1 = b.arg("w1", [d_in, hidden])
    b1 = b.arg("b1", [hidden])
    w2 = b.arg("w2", [hidden, d_out])
    b2 = b.arg("b2", [d_out])
    h = b.einsum("bi,ih->bh", "mul", [x, w1], [batch, hidden], agg="add", hint="h",
                 comment="Layer 1: x @ w1 + b1, then GELU.")
    h = b.einsum("bh,h->bh", "add", [h, b1], [batch, hidden], hint="h")
    h = b.einsum("bh->bh", "gelu", [h], [batch, hidden], hint="h")
    y = b.einsum("bh,ho->bo", "mul", [h, w2], [batch, d_out], agg="add", hint="y",
                 comment="Layer 2: h @ w2 + b2.")
    y = b.einsum("bo,o->bo", "add", [y, b2], [batch, d_out], hint="y")
    return b.function("mlp", [x, w1, b1, w2, b2], [y], [
        f"A two-layer perceptron: batch {batch}, {d_in} -> {hidden} (GELU) -> {d_out}.",
    ])


def chain(size, dtype):
    b = Builder(dtype)
    mats = [b.arg(name, [size, size]) for name in ("a", "b", "c", "d")]
    acc = mats[0]
    for i, m in enumerate(mats[1:]):
        acc = b.einsum("ij,jk->ik", "mul", [acc, m], [size, size], agg="add", hint="p",
                       comment=f"Product {i + 1} of 3.")
    return b.function("matmul_chain", mats, [acc], [
        f"A chain of three {size}x{size} matrix multiplications: ((a b) c) d.",
    ])


def rms_norm(b, x, weight, seq, d, eps):
    ss = b.einsum("sd->s", "square", [x], [seq], agg="add", hint="ss")
    ms = b.einsum("s->s", "scale", [ss], [seq], scalar=1.0 / d, hint="ms")
    ms = b.einsum("s->s", "shift", [ms], [seq], scalar=eps, hint="ms")
    inv = b.einsum("s->s", "rsqrt", [ms], [seq], hint="inv")
    xn = b.einsum("sd,s->sd", "mul", [x, inv], [seq, d], hint="xn")
    return b.einsum("sd,d->sd", "mul", [xn, weight], [seq, d], hint="xn")


def rope(b, q, cos, sin, heads, seq, hd):
    """Rotary embedding by halves: [q1, q2] -> [q1 cos - q2 sin, q2 cos + q1 sin]."""
    half = hd // 2
    q1 = b.slice(q, [0, 0, 0], [heads, seq, half], hint="lo")
    q2 = b.slice(q, [0, 0, half], [heads, seq, half], hint="hi")
    a = b.einsum("hse,se->hse", "mul", [q1, cos], [heads, seq, half], hint="r")
    c = b.einsum("hse,se->hse", "mul", [q2, sin], [heads, seq, half], hint="r")
    r1 = b.einsum("hse,hse->hse", "sub", [a, c], [heads, seq, half], hint="r")
    d = b.einsum("hse,se->hse", "mul", [q2, cos], [heads, seq, half], hint="r")
    e = b.einsum("hse,se->hse", "mul", [q1, sin], [heads, seq, half], hint="r")
    r2 = b.einsum("hse,hse->hse", "add", [d, e], [heads, seq, half], hint="r")
    return b.assemble([1, 1, 2], [r1, r2], [heads, seq, hd], hint="rot")


def llama(seq, d, heads, ffn, dtype, eps=1e-5):
    if d % heads:
        sys.exit(f"error: d-model {d} is not a multiple of heads {heads}")
    hd = d // heads
    if hd % 2:
        sys.exit(f"error: head dimension {hd} must be even for rotary embeddings")
    b = Builder(dtype)
    x = b.arg("x", [seq, d])
    attn_norm = b.arg("attn_norm", [d])
    wq = b.arg("wq", [d, heads, hd])
    wk = b.arg("wk", [d, heads, hd])
    wv = b.arg("wv", [d, heads, hd])
    wo = b.arg("wo", [heads, hd, d])
    cos = b.arg("rope_cos", [seq, hd // 2])
    sin = b.arg("rope_sin", [seq, hd // 2])
    mask = b.arg("causal_mask", [seq, seq])
    ffn_norm = b.arg("ffn_norm", [d])
    w_gate = b.arg("w_gate", [d, ffn])
    w_up = b.arg("w_up", [d, ffn])
    w_down = b.arg("w_down", [ffn, d])

    b.lines.append("  // Attention: RMSNorm, per-head projections, rotary embeddings.")
    xn = rms_norm(b, x, attn_norm, seq, d, eps)
    q = b.einsum("sd,dhe->hse", "mul", [xn, wq], [heads, seq, hd], agg="add", hint="q")
    k = b.einsum("sd,dhe->hse", "mul", [xn, wk], [heads, seq, hd], agg="add", hint="k")
    v = b.einsum("sd,dhe->hse", "mul", [xn, wv], [heads, seq, hd], agg="add", hint="v")
    q = rope(b, q, cos, sin, heads, seq, hd)
    k = rope(b, k, cos, sin, heads, seq, hd)
    b.lines.append("  // Causal softmax(q k^T / sqrt(hd)) v.")
    s = b.einsum("hqe,hke->hqk", "mul", [q, k], [heads, seq, seq], agg="add", hint="sc")
    s = b.einsum("hqk->hqk", "scale", [s], [heads, seq, seq], scalar=1.0 / math.sqrt(hd),
                 hint="sc")
    s = b.einsum("hqk,qk->hqk", "add", [s, mask], [heads, seq, seq], hint="sc")
    m = b.einsum("hqk->hq", "identity", [s], [heads, seq], agg="max", hint="mx")
    s = b.einsum("hqk,hq->hqk", "sub", [s, m], [heads, seq, seq], hint="sc")
    p = b.einsum("hqk->hqk", "exp", [s], [heads, seq, seq], hint="p")
    z = b.einsum("hqk->hq", "identity", [p], [heads, seq], agg="add", hint="z")
    p = b.einsum("hqk,hq->hqk", "div", [p, z], [heads, seq, seq], hint="p")
    o = b.einsum("hqk,hke->hqe", "mul", [p, v], [heads, seq, hd], agg="add", hint="o")
    attn = b.einsum("hse,hed->sd", "mul", [o, wo], [seq, d], agg="add", hint="attn")
    h = b.einsum("sd,sd->sd", "add", [x, attn], [seq, d], hint="res",
                 comment="Residual.")
    b.lines.append("  // Feed-forward: RMSNorm, SwiGLU.")
    hn = rms_norm(b, h, ffn_norm, seq, d, eps)
    g = b.einsum("sd,df->sf", "mul", [hn, w_gate], [seq, ffn], agg="add", hint="g")
    u = b.einsum("sd,df->sf", "mul", [hn, w_up], [seq, ffn], agg="add", hint="u")
    g = b.einsum("sf->sf", "silu", [g], [seq, ffn], hint="g")
    g = b.einsum("sf,sf->sf", "mul", [g, u], [seq, ffn], hint="g")
    f = b.einsum("sf,fd->sd", "mul", [g, w_down], [seq, d], agg="add", hint="f")
    out = b.einsum("sd,sd->sd", "add", [h, f], [seq, d], hint="out", comment="Residual.")
    args = [x, attn_norm, wq, wk, wv, wo, cos, sin, mask, ffn_norm, w_gate, w_up, w_down]
    return b.function("llama_block", args, [out], [
        "A LLaMA-style transformer block (pre-norm), batch 1:",
        f"  seq {seq}, d_model {d}, {heads} heads of {hd}, SwiGLU hidden {ffn}.",
        "RMSNorm, rotary embeddings (by halves, through slice/assemble), causal",
        "softmax attention (the mask is an input of 0 and -inf), SwiGLU FFN.",
    ])


HEADER = "// Generated by examples/generate_examples.py; edit the script, not this file.\n"


def emit(kind, args):
    if kind == "mlp":
        body = mlp(args.batch, args.d_in, args.hidden, args.d_out, args.dtype)
    elif kind == "chain":
        body = chain(args.size, args.dtype)
    else:
        body = llama(args.seq, args.d_model, args.heads, args.ffn, args.dtype)
    return HEADER + "\n" + body


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["mlp", "chain", "llama", "all"])
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--d-in", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--d-out", type=int, default=1024)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--ffn", type=int, default=11008)
    parser.add_argument("--out-dir", help="with 'all': where to write the files")
    parser.add_argument("-o", "--output", help="file to write (default: stdout)")
    args = parser.parse_args()
    for name in ("batch", "d_in", "hidden", "d_out", "size", "seq", "d_model", "heads", "ffn"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")

    if args.kind == "all":
        out_dir = args.out_dir or os.path.dirname(os.path.abspath(__file__))
        for kind, name in (("mlp", "mlp"), ("chain", "matmul_chain"),
                           ("llama", "llama_block")):
            with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
                f.write(emit(kind, args))
        return
    text = emit(args.kind, args)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()

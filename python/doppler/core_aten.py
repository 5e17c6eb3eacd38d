"""PyTorch's Core ATen op set against the frontend's op table.

    python -m doppler.core_aten                      # counts and the uncovered ops
    python -m doppler.core_aten --write docs/CoreAten.md

The Core ATen ops are the overloads of `torch.ops.aten` tagged
`torch.Tag.core` (torch 2.x): what `run_decompositions()` leaves. Every one
of them is in exactly one of the lists below, with the reason where it is
not covered; python/tests/test_core_aten.py fails when the installed torch's
list differs from these (stale), when an op listed as covered has no
emitter or no test case, or when an op listed as not covered has gained an
emitter.

What *covered* means: the op applied to float tensors the program
computes (from inputs and parameters) imports to doppler ops. Any op --
covered or not -- whose operands are constants, buffers and integer inputs
only (causal masks, rotary tables, positions, padding masks) is computed by
torch on the host and passed to the program as an argument; that is how
comparisons, `arange`, `sin`/`cos` of position tables and the like reach
programs.
"""

import argparse
import sys

import torch

# -- covered: an emitter in ops_table.ATEN, and a case in test_core_aten.CASES ---------

# overload -> what it becomes (short), or the limit that stays.
COVERED = {
    "_adaptive_avg_pool2d.default": "doppler.pool (sizes that divide), else an einsum per dim "
                                    "with the averaging matrix",
    "_adaptive_avg_pool3d.default": "as _adaptive_avg_pool2d",
    "adaptive_avg_pool1d.default": "as _adaptive_avg_pool2d, over one dim",
    "avg_pool1d.default": "as avg_pool2d, over one dim",
    "_cdist_forward.default": "the differences (one einsum), |.|^p summed, the 1/p-th power "
                              "(p = 0 refused)",
    "_embedding_bag.default": "a gather, then an einsum with the (bags x ids) matrix (sum, "
                              "mean; max refused), ids and offsets computed by torch",
    "_log_softmax.default": "einsums (max, sub, exp, sum, log)",
    "_pdist_forward.default": "cdist of the rows with themselves, the upper triangle gathered",
    "_native_batch_norm_legit.no_stats": "the batch's own statistics (instance norm's form)",
    "_native_batch_norm_legit_no_training.default": "einsums with the running statistics",
    "_softmax.default": "einsums",
    "_to_copy.default": "a no-op to the program's float type; other dtypes refused",
    "abs.default": "abs join",
    "add.Scalar": "shift join",
    "add.Tensor": "add join (alpha as a scale)",
    "addmm.default": "einsum (beta, alpha as scales)",
    "alias.default": "no-op",
    "amax.default": "max reduction",
    "amin.default": "min reduction",
    "as_strided.default": "a reshape/slice where the strides are a view of the input; other "
                          "strides refused",
    "avg_pool2d.default": "doppler.pool (avg), divisor corrections as einsums",
    "avg_pool3d.default": "doppler.pool (avg)",
    "bmm.default": "einsum",
    "cat.default": "doppler.assemble",
    "clamp.default": "max/min joins",
    "clamp.Tensor": "max/min joins",
    "clone.default": "no-op",
    "constant_pad_nd.default": "fills assembled around (or folded into a convolution)",
    "convolution.default": "doppler.conv; transposed: the adjoint convolution over the "
                           "zero-filled input with the flipped kernel",
    "cumsum.default": "an einsum with the triangular matrix of ones",
    "copy.default": "src broadcast to self's shape",
    "diagonal.default": "a gather at the diagonal's positions",
    "div.Scalar": "scale join",
    "div.Tensor": "div join",
    "elu.default": "einsums (max, min, exp)",
    "embedding.default": "doppler.gather at integer ids computed by torch",
    "erf.default": "erf join",
    "exp.default": "exp join",
    "expand.default": "broadcast dims (no copy)",
    "expm1.default": "exp join, shift",
    "fill.Scalar": "doppler.fill",
    "flip.default": "a gather at reversed positions",
    "full_like.default": "doppler.fill",
    "gather.default": "a gather at positions computed by torch (indices from constants or "
                      "integer inputs)",
    "gelu.default": "erf join (exact) or the tanh form's gelu join",
    "hardtanh.default": "max/min joins",
    "index.Tensor": "slices or a gather (index tensors computed by torch)",
    "index_put.default": "a gather from the input and the values at positions computed by "
                         "torch; accumulate=True: an einsum with the (positions x sources) "
                         "matrix of counts (up to 2^24 entries)",
    "index_select.default": "slices or a gather",
    "leaky_relu.default": "max/min joins",
    "log.default": "log join",
    "log10.default": "log join, scale",
    "log1p.default": "log join",
    "log2.default": "log join, scale",
    "masked_scatter.default": "a gather (mask computed by torch)",
    "max.dim": "max reduction; its indices are not computed (an error where used)",
    "max_pool2d_with_indices.default": "doppler.pool (max); indices not computed",
    "max_pool3d_with_indices.default": "doppler.pool (max); indices not computed",
    "maximum.default": "max join",
    "mean.default": "add reduction, scale",
    "mean.dim": "add reduction, scale",
    "min.dim": "min reduction; its indices are not computed",
    "minimum.default": "min join",
    "mm.default": "einsum",
    "mul.Scalar": "scale join",
    "mul.Tensor": "mul join",
    "native_dropout.default": "identity in eval (train=True refused: random)",
    "native_group_norm.default": "einsums",
    "native_layer_norm.default": "einsums",
    "neg.default": "neg join",
    "permute.default": "a view (no copy)",
    "pow.Scalar": "pow join",
    "pow.Tensor_Scalar": "square/sqrt/reciprocal or pow join",
    "pow.Tensor_Tensor": "pow join",
    "prod.default": "mul reduction",
    "prod.dim_int": "mul reduction",
    "reciprocal.default": "reciprocal join",
    "reflection_pad1d.default": "a gather at the reflected positions",
    "reflection_pad2d.default": "a gather per padded dim",
    "reflection_pad3d.default": "a gather per padded dim",
    "relu.default": "relu join",
    "repeat.default": "doppler.assemble of copies",
    "replication_pad2d.default": "a gather per padded dim",
    "replication_pad3d.default": "a gather per padded dim",
    "rsqrt.default": "rsqrt join",
    "scatter.src": "a gather from the input and src (indices computed by torch)",
    "scatter.value": "a gather from the input and the value",
    "scatter_add.default": "as index_put with accumulate=True",
    "scatter_reduce.two": "reduce='sum' including self: as scatter_add; other reductions "
                          "refused",
    "select.int": "a slice (a view)",
    "select_scatter.default": "slices and an assemble",
    "sigmoid.default": "sigmoid join",
    "slice.Tensor": "a slice; with a step, a slice of the range viewed as (blocks, step)",
    "slice_scatter.default": "slices and an assemble (a gather with a step)",
    "split_with_sizes.default": "slices",
    "sqrt.default": "sqrt join",
    "squeeze.dim": "a view",
    "squeeze.dims": "a view",
    "sub.Scalar": "shift join",
    "sub.Tensor": "sub join",
    "sum.dim_IntList": "add reduction",
    "tanh.default": "tanh join",
    "unsqueeze.default": "a view",
    "upsample_bilinear2d.vec": "an einsum per dim with torch's interpolation matrix",
    "upsample_nearest2d.vec": "a gather (or slices) per dim",
    "var.correction": "einsums",
    "var.dim": "einsums",
    "view.default": "a view, or doppler.reshape",
    "where.self": "mul/add with the 0/1 masks (the condition computed by torch)",
}

# -- on the host: no float tensor of the program is an operand --------------------------

HOST = {
    "arange.start_step": "creates a tensor from numbers: computed by torch, an argument",
    "empty.memory_format": "creates a tensor (its values are never read before written)",
    "empty_strided.default": "creates a tensor",
    "full.default": "creates a tensor from numbers",
    "scalar_tensor.default": "creates a tensor from a number",
    "sym_is_contiguous.default": "a layout query: a static Python value",
    "sym_numel.default": "a shape query: a static Python value",
    "sym_size.int": "a shape query: a static Python value",
    "sym_storage_offset.default": "a shape query: a static Python value",
    "sym_stride.int": "a shape query: a static Python value",
    # comparisons and boolean ops: bool results; on host values torch computes them
    "eq.Scalar": "a bool result: computed by torch on host values (masks); on program data "
                 "refused (no bool tensors in programs)",
    "eq.Tensor": "as eq.Scalar",
    "ne.Scalar": "as eq.Scalar",
    "ne.Tensor": "as eq.Scalar",
    "ge.Scalar": "as eq.Scalar",
    "ge.Tensor": "as eq.Scalar",
    "gt.Scalar": "as eq.Scalar",
    "gt.Tensor": "as eq.Scalar",
    "le.Scalar": "as eq.Scalar",
    "le.Tensor": "as eq.Scalar",
    "lt.Scalar": "as eq.Scalar",
    "lt.Tensor": "as eq.Scalar",
    "logical_not.default": "as eq.Scalar",
    "logical_and.default": "as eq.Scalar",
    "logical_or.default": "as eq.Scalar",
    "logical_xor.default": "as eq.Scalar",
    "bitwise_not.default": "as eq.Scalar (integer/bool operands)",
    "bitwise_and.Scalar": "as bitwise_not",
    "bitwise_and.Tensor": "as bitwise_not",
    "bitwise_or.Scalar": "as bitwise_not",
    "bitwise_or.Tensor": "as bitwise_not",
    "bitwise_xor.Scalar": "as bitwise_not",
    "bitwise_xor.Tensor": "as bitwise_not",
    "isinf.default": "as eq.Scalar",
    "isnan.default": "as eq.Scalar",
    "any.default": "as eq.Scalar",
    "any.dim": "as eq.Scalar",
    "any.dims": "as eq.Scalar",
}

# -- not covered, and why -----------------------------------------------------------------

_NO_JOIN = ("no join for it in the dialect (the elementwise join kinds are fixed in "
            "DopplerAttrs.td; a new one reaches the verifier, cost model, interpreter, both "
            "runtimes and both linalg conversions); on host values torch computes it")
_BACKWARD = "a gradient op: Doppler imports inference (forward) programs"
_DATA = ("integer results computed from float data (indices, positions): Doppler programs "
         "hold float tensors, integers only as gather indices computed by torch")

NOT_COVERED = {
    **{op: _NO_JOIN for op in (
        "acos.default", "acosh.default", "asin.default", "asinh.default", "atan.default",
        "atan2.default", "atanh.default", "ceil.default", "cos.default", "cosh.default",
        "floor.default", "fmod.Scalar", "fmod.Tensor", "remainder.Scalar", "remainder.Tensor",
        "round.default", "sign.default", "sin.default", "sinh.default", "tan.default",
        "trunc.default")},
    "div.Scalar_mode": "division with rounding (floor, trunc): " + _NO_JOIN,
    "div.Tensor_mode": "as div.Scalar_mode",
    "_native_batch_norm_legit.default": "batch norm in training mode (batch statistics, the "
                                        "running ones updated): refused, call module.eval() "
                                        "(in eval export writes _no_training)",
    "atan2.out": "an out= variant (export never emits it); atan2 itself has no join",
    "resize_.default": "in place: resizes a tensor's storage (functional exports do not "
                       "contain it; Doppler values are immutable)",
    **{op: _BACKWARD for op in (
        "_adaptive_avg_pool2d_backward.default", "avg_pool2d_backward.default",
        "convolution_backward.default", "embedding_dense_backward.default",
        "max_pool2d_with_indices_backward.default", "native_group_norm_backward.default",
        "native_layer_norm_backward.default")},
    "argmax.default": _DATA,
    "argmin.default": _DATA,
    "sort.default": _DATA + " (sorted values need the permutation)",
    "topk.default": _DATA + " (mixture-of-experts routing: which experts run depends on "
                            "the data)",
    "nonzero.default": "a data-dependent shape: Doppler programs are static",
    "_local_scalar_dense.default": "`.item()`: a Python value from tensor data "
                                   "(data-dependent)",
    "_fft_r2c.default": "complex results: no complex element type",
    "_fft_c2r.default": "complex operands: no complex element type",
    "rand.default": "random numbers: Doppler programs are deterministic (refused, never "
                    "folded)",
    "randn.default": "random numbers (refused)",
    "randperm.default": "random numbers (refused)",
    "grid_sampler_2d.default": "sampling at positions computed from float data (a gather on "
                               "data)",
    "col2im.default": "overlapping windows summed back (fold; torch's decompositions write "
                      "nn.Fold as an accumulating index_put, which is covered): not written",
}


def core_overloads():
    """The Core ATen overloads of the installed torch, "name.overload"
    sorted; empty before torch 2 (no torch.Tag.core)."""
    tag = getattr(getattr(torch, "Tag", None), "core", None)
    if tag is None:
        return []
    # Every aten op the dispatcher knows: torch.ops.aten's dir() lists only
    # the packets created so far (it grows as code touches ops, so the list
    # depended on what ran before).
    every = getattr(torch._C, "_dispatch_get_all_op_names", None)
    candidates = sorted({n.split("::", 1)[1].split(".")[0] for n in every()
                         if n.startswith("aten::")}) if every else dir(torch.ops.aten)
    names = []
    for name in candidates:
        try:
            packet = getattr(torch.ops.aten, name)
        except (AttributeError, RuntimeError):
            continue
        if not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            if tag in getattr(packet, overload).tags:
                names.append(f"{name}.{overload}")
    return sorted(names)


def has_emitter(overload):
    from . import ops
    return "aten." + overload.split(".")[0] in ops.ATEN


def status(overload):
    """("covered" | "host" | "not covered" | "unknown", note)."""
    for kind, table in (("covered", COVERED), ("host", HOST), ("not covered", NOT_COVERED)):
        if overload in table:
            return kind, table[overload]
    return "unknown", "not in doppler.core_aten's lists"


def markdown(ops):
    counts = {}
    for op in ops:
        kind = status(op)[0]
        counts[kind] = counts.get(kind, 0) + 1
    lines = [
        "# Core ATen coverage",
        "",
        "Written by `python -m doppler.core_aten --write docs/CoreAten.md` "
        "(python/doppler/core_aten.py), from the torch it runs under "
        f"(torch {torch.__version__.split('+')[0]}): the overloads of `torch.ops.aten` tagged "
        "`torch.Tag.core`, what `run_decompositions()` leaves, against the frontend's op "
        "table. python/tests/test_core_aten.py runs a small case of every covered op "
        "through Doppler and fails when this list is stale.",
        "",
        f"{len(ops)} Core ATen overloads: **{counts.get('covered', 0)} covered** (on float "
        f"tensors the program computes), {counts.get('host', 0)} computed by torch on the "
        "host (creation ops, shape queries, and bool-valued ops, which programs never compute "
        f"from float data), {counts.get('not covered', 0)} not covered"
        + (f", {counts['unknown']} unknown (not in the lists)" if counts.get("unknown") else "")
        + ".",
        "",
        "Any op, covered or not, whose operands are constants, buffers and integer inputs "
        "only is computed by torch and passed as an argument (causal and padding masks, "
        "rotary sin/cos tables, positions); the lists are about float data the program "
        "computes.",
    ]
    for kind, title in (("covered", "Covered"), ("host", "Computed by torch on the host"),
                        ("not covered", "Not covered, and why"), ("unknown", "Unknown")):
        rows = [op for op in ops if status(op)[0] == kind]
        if not rows:
            continue
        lines += ["", f"## {title} ({len(rows)})", "", "| op | what it becomes / why |",
                  "|---|---|"]
        lines += [f"| `aten.{op}` | {status(op)[1]} |" for op in rows]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m doppler.core_aten", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", help="write the Markdown table to this file")
    args = parser.parse_args(argv)
    ops = core_overloads()
    if not ops:
        print("this torch has no Core ATen tags (torch.Tag.core): torch 2.x is needed")
        return 1
    text = markdown(ops)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
    kinds = {}
    for op in ops:
        kinds.setdefault(status(op)[0], []).append(op)
    print(f"{len(ops)} Core ATen overloads: " +
          ", ".join(f"{k} {len(v)}" for k, v in kinds.items()))
    for op in kinds.get("not covered", []) + kinds.get("unknown", []):
        print(f"  {op}: {status(op)[1]}")
    return 1 if kinds.get("unknown") else 0


if __name__ == "__main__":
    sys.exit(main())

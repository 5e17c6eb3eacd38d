"""Argument helpers shared by the emitters of the op table."""

import torch

from .frontend import Const, IntInput, Unavailable
from .ir import Val


def _is_tensor(x):
    return isinstance(x, (Val, Const, IntInput, Unavailable))


def _is_number(x):
    return isinstance(x, (int, float, bool)) and not isinstance(x, torch.Tensor)


def _dim(d, rank):
    d = int(d)
    if d < -rank or d >= max(rank, 1):
        raise IndexError(f"dim {d} out of range for rank {rank}")
    return d % rank if rank else 0


def _dims(dim, rank):
    if dim is None:
        return list(range(rank))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return list(range(rank))
        return sorted({_dim(d, rank) for d in dim})
    return [_dim(dim, rank)]


def _check_dtype_arg(ctx, dtype):
    if dtype is not None and dtype != ctx.dtype:
        raise ctx.unsupported(f"dtype={dtype} (the program is {ctx.dtype})")

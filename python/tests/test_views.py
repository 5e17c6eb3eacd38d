"""Views and reshapes import as one doppler.reshape (or as nothing: a view
the einsums read as it is). Op counts are read from the emitted MLIR;
values are checked against torch through doppler.run."""

import pytest
import torch
import torch.nn as nn

import doppler
from conftest import Fn, check_run, needs_tools, op_counts, randn

pytestmark = needs_tools

torch.manual_seed(0)


r = randn
ops = op_counts


# -- views ------------------------------------------------------------------------


class HeadSplit(nn.Module):
    """A head split of a computed value and the merge back after attention."""

    def forward(self, x):
        b, t, c = x.shape
        h = (x * 2.0).view(b, t, 4, c // 4).transpose(1, 2)
        y = torch.softmax(h @ h.transpose(-2, -1), dim=-1) @ h
        return y.transpose(1, 2).reshape(b, t, c)


def test_head_split_is_one_reshape():
    counts, text = ops(HeadSplit(), (r(2, 5, 16),))
    # the split: one reshape; the merge of the permuted result: one permuting
    # einsum and one reshape (the output must be plain)
    assert counts["reshape"] == 2, text
    assert counts["slice"] == 0 and counts["assemble"] == 0, text
    assert "doppler.reshape %v0 : tensor<2x5x16xf32> -> tensor<2x5x4x4xf32>" in text
    check_run(HeadSplit(), (r(2, 5, 16),))


@pytest.mark.parametrize("name, fn, shape", [
    ("view", lambda x: (x + 1.0).view(6, 4) * 2.0, (4, 6)),
    ("flatten", lambda x: torch.flatten(x * 2.0, 1) + 1.0, (2, 3, 4)),
    ("flatten_permuted", lambda x: torch.flatten(x.permute(0, 2, 1) * 2.0, 1), (2, 3, 4)),
    ("unflatten", lambda x: (x * 2.0).unflatten(1, (3, 4)).sum(-1), (2, 12)),
    ("squeeze", lambda x: (x * 2.0).squeeze() + 1.0, (3, 1, 4, 1)),
    ("expand_unit", lambda x: (x * 2.0).expand(3, 5, 4) + 1.0, (3, 1, 4)),
    ("reshape_of_reshape", lambda x: (x * 2.0).view(4, 6).view(3, 8) + 1.0, (6, 4)),
    ("permute_reshape", lambda x: (x * 2.0).permute(2, 0, 1).reshape(4, 6), (2, 3, 4)),
    ("select", lambda x: (x * 2.0).select(1, 2) + 1.0, (3, 4, 5)),
])
def test_view_is_one_reshape(name, fn, shape):
    """One doppler.reshape in all: the view's own, or (a merge, which is
    free) the plain output's; a permuted value is put in order by the einsum
    computing it (the permute is free)."""
    x = r(*shape)
    counts, text = ops(fn, (x,))
    assert counts["reshape"] == 1, text
    assert counts["assemble"] == 0 and counts["slice"] == (1 if name == "select" else 0), text
    check_run(fn, (x,))


def test_unsqueeze_and_expand_are_free():
    def f(x):
        return (x * 2.0).unsqueeze(1).expand(3, 5, 4) + 1.0

    counts, text = ops(f, (r(3, 4),))
    assert counts["reshape"] == 0 and counts["einsum"] == 3, text  # mul, add, the output
    check_run(f, (r(3, 4),))


def test_split_and_merge_at_once_stays_factored():
    """[T, B, C] -> [T, B * H, E] (torch's multi-head attention), transposed
    and viewed [B, H, T, E]: one reshape to [T, B, H, E], the rest views."""
    def f(x):
        t, b, c = x.shape
        q = (x * 2.0).view(t, b * 4, c // 4).transpose(0, 1).view(b, 4, t, c // 4)
        return q * 3.0

    x = r(5, 2, 16)
    counts, text = ops(f, (x,))
    assert counts["reshape"] == 1, text
    assert "-> tensor<5x2x4x4xf32>" in text
    check_run(f, (x,))


def test_unit_batch_view_is_free():
    """[1, T, C] viewed [T, C] (a linear's input at batch 1) costs no op."""
    def f(x, w):
        return ((x * 2.0).view(4, 6) @ w).view(1, 4, 3)

    counts, text = ops(f, (r(1, 4, 6), r(6, 3)))
    assert counts["reshape"] == 0, text
    check_run(f, (r(1, 4, 6), r(6, 3)))

"""scaled_dot_product_attention kept whole through torch.export (torch 2):
the layout of its output at batch > 1 (the pattern of GPT-2's attention,
whose decomposition torch 2.15 cannot retrace), rows a mask leaves empty
(0, as torch's safe softmax gives, not nan) and grouped-query attention
(enable_gqa) with masks of one head and of every head."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import check_run, needs_tools
from doppler.sources import has_export

pytestmark = [needs_tools,
              pytest.mark.skipif(not has_export(), reason="needs torch.export (torch 2.x)")]


def r(*shape):
    return torch.randn(*shape, generator=_GEN)


_GEN = torch.Generator().manual_seed(0)
_SDPA = getattr(F, "scaled_dot_product_attention", None)
HAS_GQA = _SDPA is not None and "enable_gqa" in (_SDPA.__doc__ or "")


class SelfAttention(nn.Module):
    """GPT-2's attention: one projection split in three, heads by view and
    transpose, the output transposed back and reshaped."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, mask):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        y = y.transpose(1, 2).reshape(batch, length, width)
        return self.out(y.view(-1, width)).view(batch, length, width)


def test_attention_at_batch_two_with_an_empty_row():
    torch.manual_seed(0)
    mask = torch.ones(2, 1, 6, 6, dtype=torch.bool).tril()
    mask[1, :, :, :2] = False  # left padding: row 0 of batch 1 attends to nothing
    result = check_run(SelfAttention().eval(), (r(2, 6, 16), mask))
    assert torch.isfinite(result.outputs).all()


class Grouped(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)


@pytest.mark.skipif(not HAS_GQA, reason="this torch has no enable_gqa")
@pytest.mark.parametrize("mask_heads,kind", [(1, "float"), (4, "float"), (1, "bool"),
                                             (4, "bool")])
def test_grouped_query_attention(mask_heads, kind):
    """4 query heads on 2 key/value heads; a float mask is an input, a
    bool one (computed on the host, as from an attention_mask) a constant."""
    q, k, v = r(2, 4, 5, 8), r(2, 2, 7, 8), r(2, 2, 7, 8)
    mask = r(2, mask_heads, 5, 7)
    if kind == "bool":
        mask = mask > -0.5
        mask[0, 0, 1] = False  # a row with nothing to attend to
    check_run(Grouped().eval(), (q, k, v, mask))


@pytest.mark.skipif(not HAS_GQA, reason="this torch has no enable_gqa")
def test_grouped_query_attention_without_mask():
    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    check_run(f, (r(1, 6, 5, 8), r(1, 3, 5, 8), r(1, 3, 5, 8)))

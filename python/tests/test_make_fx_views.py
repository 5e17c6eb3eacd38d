"""Views in make_fx's aten graphs (torch 1.13's fallback when symbolic_trace
cannot trace a model): `_reshape_alias` keeps its input's storage offset,
so a reshape of a slice that does not start at 0 (GPT-2's key and value,
columns of one fused projection) is still a reshape."""

import torch
import torch.nn as nn

from conftest import check_run, needs_tools


class FusedProjectionAttention(nn.Module):
    """GPT-2's attention as transformers 4.36 writes it: one projection
    split in three, heads by view and permute, 4-d matmuls."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).permute(0, 2, 1, 3) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / 4.0
        y = torch.matmul(scores.softmax(-1), v)
        return y.permute(0, 2, 1, 3).reshape(batch, length, width)


@needs_tools
def test_reshape_alias_of_an_offset_slice():
    from torch.fx.experimental.proxy_tensor import make_fx
    torch.manual_seed(0)
    module = FusedProjectionAttention().eval()
    x = torch.randn(1, 8, 16)
    gm = make_fx(module)(x)
    check_run(gm, (x,))
    check_run(gm, (torch.randn(1, 8, 16),))

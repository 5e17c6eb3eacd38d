"""A LLaMA-style transformer block in PyTorch (Doppler's PyTorch frontend example).

Pre-norm: RMSNorm (written with pow / mean / rsqrt), multi-head attention
with rotary embeddings (by halves; the cos / sin tables are buffers) and a
causal mask (a bool buffer, applied with masked_fill), SwiGLU feed-forward.
Written with indexing (x.size(1), parts[0]) so that torch.fx.symbolic_trace
can trace it.

    PYTHONPATH=python /usr/bin/python3 examples/torch/llama_block.py
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    """Rotary embedding by halves: [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin]."""
    halves = x.chunk(2, dim=-1)
    x1 = halves[0]
    x2 = halves[1]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d_model=64, n_heads=4, ffn=176, max_seq=32):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.attn_norm = RMSNorm(d_model)
        self.wq = nn.Linear(d_model, d_model, bias=False)
        self.wk = nn.Linear(d_model, d_model, bias=False)
        self.wv = nn.Linear(d_model, d_model, bias=False)
        self.wo = nn.Linear(d_model, d_model, bias=False)
        self.ffn_norm = RMSNorm(d_model)
        self.w_gate = nn.Linear(d_model, ffn, bias=False)
        self.w_up = nn.Linear(d_model, ffn, bias=False)
        self.w_down = nn.Linear(ffn, d_model, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_seq).float(), inv_freq)
        self.register_buffer("rope_cos", angles.cos())
        self.register_buffer("rope_sin", angles.sin())
        self.register_buffer("causal", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool)))

    def forward(self, x):
        batch = x.size(0)
        seq = x.size(1)
        cos = self.rope_cos[:seq]
        sin = self.rope_sin[:seq]
        h = self.attn_norm(x)
        q = self.wq(h).view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)
        q = rotate(q, cos, sin)
        k = rotate(k, cos, sin)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~self.causal[:seq, :seq], float("-inf"))
        attn = F.softmax(scores, dim=-1) @ v
        attn = attn.transpose(1, 2).contiguous().view(batch, seq, -1)
        x = x + self.wo(attn)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


def make(seed=0):
    """The block (eval mode) and example inputs at test size: batch 1, seq 16."""
    torch.manual_seed(seed)
    block = LlamaBlock().eval()
    with torch.no_grad():  # RMSNorm weights other than ones
        block.attn_norm.weight.uniform_(0.5, 1.5)
        block.ffn_norm.weight.uniform_(0.5, 1.5)
    return block, (torch.randn(1, 16, 64),)


if __name__ == "__main__":
    import common

    common.main(make, "llama_block")

"""A GPT-style transformer block in PyTorch (Doppler's PyTorch frontend example).

As nanoGPT's Block: LayerNorm, causal self-attention with one fused q/k/v
projection (split, then viewed as heads; the causal mask is a buffer
compared with 0 and applied with masked_fill), LayerNorm, GELU MLP (erf
form, nn.GELU()). Written with indexing (x.size(0), parts[0]) so that
torch.fx.symbolic_trace can trace it.

    PYTHONPATH=python /usr/bin/python3 examples/torch/gpt_block.py
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.n_embd = n_embd
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B = x.size(0)
        T = x.size(1)
        C = x.size(2)
        hs = C // self.n_head
        parts = self.c_attn(x).split(self.n_embd, dim=2)
        q = parts[0].view(B, T, self.n_head, hs).transpose(1, 2)
        k = parts[1].view(B, T, self.n_head, hs).transpose(1, 2)
        v = parts[2].view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPTBlock(nn.Module):
    def __init__(self, n_embd=64, n_head=4, block_size=32):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def make(seed=0):
    """The block (eval mode) and example inputs at test size: batch 2, seq 16."""
    torch.manual_seed(seed)
    block = GPTBlock().eval()
    with torch.no_grad():  # LayerNorm affine parameters other than 1 and 0
        for ln in (block.ln_1, block.ln_2):
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.2, 0.2)
    return block, (torch.randn(2, 16, 64),)


if __name__ == "__main__":
    import common

    common.main(make, "gpt_block")

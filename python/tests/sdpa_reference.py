"""A stand-in for F.scaled_dot_product_attention (torch 2.x), wrapped as one FX node."""

import math

import torch
import torch.fx


def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    factor = scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    scores = query @ key.transpose(-2, -1) * factor
    if is_causal:
        keep = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ value


torch.fx.wrap("sdpa")


class Attention(torch.nn.Module):
    def __init__(self, causal, scale=None):
        super().__init__()
        self.causal = causal
        self.scale = scale

    def forward(self, q, k, v):
        return sdpa(q, k, v, is_causal=self.causal, scale=self.scale)

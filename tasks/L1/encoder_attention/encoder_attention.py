"""Non-causal multi-head attention (encoders and diffusion transformers) in plain PyTorch. Also the float64 oracle.

scores = q k^T / sqrt(head_dim), softmax over all keys, times v; fp32 (float64 for the oracle), rounded once.
Query rows go in chunks of 512 so one chunk's score matrix stays small (the float64 oracle at 18432 tokens with 22
heads holds 1.7 GB of scores at a time instead of 60 GB).
"""

from __future__ import annotations

import math

import torch
from torch import nn

CHUNK_ROWS = 512


class EncoderAttention(nn.Module):
    def __init__(self, num_heads: int, head_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.softmax_scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq = q.shape[1]
        compute = torch.promote_types(q.dtype, torch.float32)
        qt = q.to(compute).transpose(1, 2)  # [batch, heads, seq, head_dim]
        kt = k.to(compute).transpose(1, 2)
        vt = v.to(compute).transpose(1, 2)
        out = torch.empty(q.shape, dtype=compute, device=q.device)  # [batch, seq, heads, head_dim]
        for start in range(0, seq, CHUNK_ROWS):
            end = min(seq, start + CHUNK_ROWS)
            scores = torch.matmul(qt[:, :, start:end], kt.transpose(-1, -2)).mul_(self.softmax_scale)
            out[:, start:end] = torch.matmul(torch.softmax(scores, dim=-1), vt).transpose(1, 2)
        return out.to(q.dtype)

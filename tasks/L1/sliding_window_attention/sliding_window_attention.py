"""Causal sliding-window grouped-query attention for prefill, in plain PyTorch. Also the float64 oracle.

Query i attends to keys j with i - sliding_window < j <= i (its last `sliding_window` tokens, itself included:
transformers' sliding-window causal mask, flash_attn window_size=(sliding_window - 1, 0)). Query head h reads kv
head h // (num_heads / num_kv_heads). Query rows go in chunks of 512 and each chunk reads only the keys its window
can reach, so the float64 oracle at 32k tokens holds one chunk's band of scores at a time. fp32 (float64 for the
oracle) math, one rounding.
"""

from __future__ import annotations

import math

import torch
from torch import nn

CHUNK_ROWS = 512


class SlidingWindowAttention(nn.Module):
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, sliding_window: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.sliding_window = sliding_window
        self.softmax_scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        batch, seq, heads, _ = q.shape
        compute = torch.promote_types(q.dtype, torch.float32)
        group = heads // k.shape[2]
        qt = q.to(compute).transpose(1, 2)  # [batch, heads, seq, head_dim]
        kt = k.to(compute).transpose(1, 2).repeat_interleave(group, dim=1)
        vt = v.to(compute).transpose(1, 2).repeat_interleave(group, dim=1)
        out = torch.empty(q.shape, dtype=compute, device=q.device)
        for start in range(0, seq, CHUNK_ROWS):
            end = min(seq, start + CHUNK_ROWS)
            first = max(0, start - self.sliding_window + 1)
            scores = torch.matmul(qt[:, :, start:end], kt[:, :, first:end].transpose(-1, -2)).mul_(self.softmax_scale)
            query_pos = torch.arange(start, end, device=q.device)[:, None]
            key_pos = torch.arange(first, end, device=q.device)[None, :]
            hidden = (key_pos > query_pos) | (key_pos <= query_pos - self.sliding_window)
            probs = torch.softmax(scores.masked_fill_(hidden, float("-inf")), dim=-1)
            out[:, start:end] = torch.matmul(probs, vt[:, :, first:end]).transpose(1, 2)
        return out.to(q.dtype)

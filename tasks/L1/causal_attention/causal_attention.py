"""Causal grouped-query attention for prefill, in plain PyTorch. Also the float64 oracle.

Straightforward math: repeat each kv head for its group of query heads (query head i reads kv head
i // (num_heads // num_kv_heads), flash-attn's convention), scores = q k^T / sqrt(head_dim), mask keys after the
query, softmax, times v; all in fp32 (float64 for the oracle), rounded once. Query rows go in chunks of 512 so the
score matrix of one chunk stays small (the float64 oracle at seq 8192 with 32 heads holds 1 GB of scores at a
time, 4 GB at seq 32768) and the loop stays short enough for torch.compile (64 chunks at seq 32768).
"""

from __future__ import annotations

import math

import torch
from torch import nn

CHUNK_ROWS = 512


class CausalAttention(nn.Module):
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.softmax_scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        batch, seq, heads, _ = q.shape
        compute = torch.promote_types(q.dtype, torch.float32)
        group = heads // k.shape[2]
        qt = q.to(compute).transpose(1, 2)  # [batch, heads, seq, head_dim]
        kt = k.to(compute).transpose(1, 2).repeat_interleave(group, dim=1)
        vt = v.to(compute).transpose(1, 2).repeat_interleave(group, dim=1)
        out = torch.empty(q.shape, dtype=compute, device=q.device)  # [batch, seq, heads, head_dim]
        for start in range(0, seq, CHUNK_ROWS):
            end = min(seq, start + CHUNK_ROWS)
            scores = torch.matmul(qt[:, :, start:end], kt[:, :, :end].transpose(-1, -2)).mul_(self.softmax_scale)
            query_pos = torch.arange(start, end, device=q.device)[:, None]
            key_pos = torch.arange(end, device=q.device)[None, :]
            scores.masked_fill_(key_pos > query_pos, float("-inf"))
            probs = torch.softmax(scores, dim=-1)
            out[:, start:end] = torch.matmul(probs, vt[:, :, :end]).transpose(1, 2)
        return out.to(q.dtype)

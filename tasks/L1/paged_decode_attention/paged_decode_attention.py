"""Decode attention over a paged KV cache (vLLM's PagedAttention / flash_attn_with_kvcache with a block table), in
plain PyTorch. Also the float64 oracle.

Sequence b has seq_lens[b] cached tokens; token t of it lives in block block_tables[b, t // block_size] at slot
t % block_size of key_cache / value_cache [num_blocks, block_size, num_kv_heads, head_dim]. Its one query token
(the newest, already in the cache) attends to all of them. A loop over sequences gathers each one's pages, fp32
(float64 for the oracle) math, one rounding.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class PagedDecodeAttention(nn.Module):
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, block_size: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.block_size = block_size
        self.softmax_scale = 1.0 / math.sqrt(head_dim)

    def forward(self, query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(query.dtype, torch.float32)
        group = self.num_heads // self.num_kv_heads
        out = torch.empty(query.shape, dtype=compute, device=query.device)
        for b, length in enumerate(seq_lens.tolist()):
            blocks = block_tables[b, : (length + self.block_size - 1) // self.block_size].long()
            k = key_cache[blocks].flatten(0, 1)[:length].to(compute)  # [length, kv_heads, head_dim]
            v = value_cache[blocks].flatten(0, 1)[:length].to(compute)
            q = query[b].to(compute).view(self.num_kv_heads, group, self.head_dim)
            scores = torch.einsum("hgd,thd->hgt", q, k) * self.softmax_scale
            out[b] = torch.einsum("hgt,thd->hgd", torch.softmax(scores, dim=-1), v).reshape(self.num_heads, -1)
        return out.to(query.dtype)

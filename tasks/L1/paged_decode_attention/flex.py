"""Paged decode attention through FlexAttention (torch.nn.attention.flex_attention, compiled to its Triton flex
decoding kernel on CUDA), reading vLLM's paged cache in place, as vLLM's FlexAttention backend and PyTorch's
experimental PagedAttention do: key_cache / value_cache are viewed, without a copy, as one long
[1, num_kv_heads, num_blocks * block_size, head_dim] sequence that every sequence of the batch shares, and a
block mask built per call from block_tables and seq_lens lists, for sequence b, the physical blocks holding its
tokens (sorted, each once), so the kernel loads only those pages.

A block table may name a block twice. Token slot s of sequence b then counts as many times as the sequence's
logical positions map to it, m(b, s); the mask keeps slots with m > 0 and the score_mod adds log m, so
exp(score + log m) = m * exp(score): the softmax over physical slots equals the one over logical positions. m is
read from a per-call [batch, num_blocks] count of each sequence's full pages plus its one partial tail page.

The query heads of one kv head (GQA group) are the query rows of a flex call without enable_gqa: q viewed as
[batch, num_kv_heads, group, head_dim], so a group of any size takes flex decoding's short-query kernel (with
enable_gqa, flex packs only power-of-two groups there and sends Qwen2's 7 to its prefill kernel). Every step of the block mask is a tensor op without a host
sync, so a call can be captured in a CUDA graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import BlockMask, flex_attention

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("paged_decode_attention.py"), namespace="tasks.paged_decode_attention")
_compiled = torch.compile(flex_attention, dynamic=False)
Q_BLOCK = 128  # flex's default sparse query block; holds every query head of a group (groups here are <= 8)

ScoreMod = Callable[..., torch.Tensor]


def paged_block_mask(block_tables: torch.Tensor, seq_lens: torch.Tensor, num_blocks: int, block_size: int,
                     group: int) -> tuple[BlockMask, ScoreMod]:
    """The block mask over the cache viewed as one sequence (each sequence's used pages, sorted, each once) and
    the score_mod adding log m(b, slot), m the number of the sequence's logical positions stored in that slot."""
    batch, max_blocks = block_tables.shape
    device = block_tables.device
    lengths = seq_lens.long()
    full, tail = lengths // block_size, lengths % block_size  # full pages, tokens on the partial tail page
    logical = torch.arange(max_blocks, device=device)
    pages = block_tables.long()
    counts = torch.zeros(batch, num_blocks, dtype=torch.int32, device=device)
    counts.scatter_add_(1, pages, (logical < full[:, None]).int())  # uses of each page as a full page
    tail_page = torch.where(tail > 0, pages.gather(1, full.clamp(max=max_blocks - 1)[:, None])[:, 0], -1)

    used = torch.where(logical < (lengths + block_size - 1)[:, None] // block_size, pages, num_blocks).sort(1).values
    first = (used < num_blocks) & (used != F.pad(used, (1, 0), value=-1)[:, :-1])
    kv_num_blocks = first.sum(1, dtype=torch.int32)
    kv_indices = torch.where(first, used, num_blocks).sort(1).values.clamp(max=num_blocks - 1).int()
    if not kv_indices.is_cuda and num_blocks > max_blocks:  # Inductor's CPU flex wants a column per KV block
        kv_indices = F.pad(kv_indices, (0, num_blocks - max_blocks))

    def multiplicity(b: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        page = kv_idx // block_size
        return counts[b, page] + ((page == tail_page[b]) & (kv_idx % block_size < tail[b])).int()

    def stored(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        return multiplicity(b, kv_idx) > 0

    def repeated(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor,
                 kv_idx: torch.Tensor) -> torch.Tensor:
        return score + multiplicity(b, kv_idx).to(score.dtype).log()

    rows = (group + Q_BLOCK - 1) // Q_BLOCK
    mask = BlockMask.from_kv_blocks(
        kv_num_blocks[:, None, None].expand(batch, 1, rows), kv_indices[:, None, None, :].expand(batch, 1, rows, -1),
        BLOCK_SIZE=(Q_BLOCK, block_size), mask_mod=stored, seq_lengths=(group, num_blocks * block_size),
        compute_q_blocks=False,
    )
    return mask, repeated


def paged_flex_attention(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                         block_tables: torch.Tensor, seq_lens: torch.Tensor, scale: float,
                         attend: Callable = _compiled) -> torch.Tensor:
    """Decode attention of query [batch, heads, head_dim] over the paged cache; `attend` is flex_attention itself
    or a compiled one (the default)."""
    (batch, heads, head_dim), (num_blocks, block_size, kv_heads, _) = query.shape, key_cache.shape
    group = heads // kv_heads
    q = query.view(batch, kv_heads, group, head_dim)
    k = key_cache.view(1, num_blocks * block_size, kv_heads, head_dim).transpose(1, 2)  # views: no copy of the cache
    v = value_cache.view(1, num_blocks * block_size, kv_heads, head_dim).transpose(1, 2)
    mask, score_mod = paged_block_mask(block_tables, seq_lens, num_blocks, block_size, group)
    return attend(q, k, v, score_mod=score_mod, block_mask=mask, scale=scale).reshape(query.shape)


class PagedDecodeAttention(_eager.PagedDecodeAttention):
    def forward(self, query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
        return paged_flex_attention(query, key_cache, value_cache, block_tables, seq_lens, self.softmax_scale)

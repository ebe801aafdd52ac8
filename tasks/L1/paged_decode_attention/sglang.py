"""Paged decode attention through SGLang's Triton decode kernel (`decode_attention_fwd`, the kernel of its
`TritonAttnBackend`): split-KV flash decoding over a token-indexed KV pool, then one reduction over the splits.

SGLang addresses the cache by token slot: request b reads slots kv_indices[kv_indptr[b]:kv_indptr[b + 1]] of a pool
[slots, num_kv_heads, head_dim]. vLLM's [num_blocks, block_size, kv_heads, head_dim] cache is such a pool viewed
flat (slot = block * block_size + offset), so the cache is read in place; the block table becomes slot indices.
SGLang builds those indices and each request's split count once per batch step and reuses them in every layer;
here they are built in every call (a few small kernels, no host sync, so the call stays capturable in a CUDA
graph). The split counts come from SGLang's own heuristic kernel (`get_num_kv_splits_triton`) with its defaults:
at most 8 splits (`--triton-attention-num-kv-splits`) and the device's SM count.
"""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline: a worker loads the baselines' modules before its integrity snapshot, and
# builds instances after it. SGLang's import sets up things the snapshot watches: it setdefaults TRITON_CACHE_DIR,
# TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH and two more to ~/.cache/sglang (a harness on the device sets the first
# two itself) and imports torch._dynamo (checked 2026-12-02 on the CPU: no torch function patched, no thread)
from sglang.kernels.ops.attention.decode_attention import decode_attention_fwd
from sglang.kernels.ops.attention.metadata import get_num_kv_splits_triton

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("paged_decode_attention.py"), namespace="tasks.paged_decode_attention")

MAX_KV_SPLITS = 8  # SGLang's default triton_attention_num_kv_splits


def token_slots(block_tables: torch.Tensor, seq_lens: torch.Tensor, block_size: int) -> tuple[torch.Tensor,
                                                                                              torch.Tensor]:
    """(kv_indptr [batch + 1], kv_indices) in SGLang's layout for a vLLM block table, without a host sync:
    kv_indices holds every request's slots back to back and then unused tail entries (it is sized for full
    tables, since its used length is only known on the device)."""
    batch, max_blocks = block_tables.shape
    capacity = max_blocks * block_size
    lengths = seq_lens.to(torch.int32)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32, device=block_tables.device)
    torch.cumsum(lengths, 0, out=kv_indptr[1:])
    token = torch.arange(capacity, device=block_tables.device)
    slots = block_tables.repeat_interleave(block_size, dim=1) * block_size + (token % block_size).to(torch.int32)
    tail = batch * capacity  # past the end of the used part: where the slots of tokens past seq_lens go
    where = torch.where(token[None, :] < lengths[:, None], kv_indptr[:-1, None].long() + token[None, :], tail)
    kv_indices = torch.zeros(tail + 1, dtype=torch.int32, device=block_tables.device)
    kv_indices.scatter_(0, where.flatten(), slots.flatten().to(torch.int32))
    return kv_indptr, kv_indices


class PagedDecodeAttention(_eager.PagedDecodeAttention):
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, block_size: int) -> None:
        super().__init__(num_heads, num_kv_heads, head_dim, block_size)
        self._sm_count: int | None = None

    def forward(self, query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
        batch = query.shape[0]
        if self._sm_count is None:  # SGLang's device_core_count (1 off a GPU: the Triton interpreter's tests)
            cuda = query.device.type == "cuda"
            self._sm_count = torch.cuda.get_device_properties(query.device).multi_processor_count if cuda else 1
        kv_indptr, kv_indices = token_slots(block_tables, seq_lens, self.block_size)
        num_kv_splits = torch.empty(batch, dtype=torch.int32, device=query.device)
        get_num_kv_splits_triton[(1,)](
            num_kv_splits, seq_lens, batch, 1, self.num_heads, self.num_kv_heads, MAX_KV_SPLITS, self._sm_count,
            MAX_NUM_SEQ=max(256, 1 << (batch - 1).bit_length()),
        )
        out = torch.empty_like(query)
        logits = torch.empty(batch, self.num_heads, MAX_KV_SPLITS, self.head_dim, dtype=torch.float32,
                             device=query.device)
        lse = torch.empty(batch, self.num_heads, MAX_KV_SPLITS, dtype=torch.float32, device=query.device)
        decode_attention_fwd(
            query, key_cache.view(-1, self.num_kv_heads, self.head_dim),
            value_cache.view(-1, self.num_kv_heads, self.head_dim), out, kv_indptr, kv_indices, logits, lse,
            num_kv_splits, MAX_KV_SPLITS, self.softmax_scale, 1.0, 1.0,
        )
        return out

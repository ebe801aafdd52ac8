"""Rotary embedding through Liger-Kernel's Triton rope kernel (LigerRopeFunction, liger_kernel.ops.rope).

Liger implements the HuggingFace Llama rotation, i.e. vLLM's neox layout (rotate halves) over the whole head, on
q/k laid out [batch, seq, heads, head_dim] and passed as [batch, heads, seq, head_dim] views, with cos/sin of shape
[1, seq, head_dim] (HF's duplicated halves; the kernel reads the first half). vLLM's [tokens, heads * head_size]
layout is exactly that with batch 1, so contiguous q/k are passed as views: the kernel loads them, rotates in the
cos/sin dtype (fp32 here, the same table as the eager module) and stores back in place, rounding once (strided q/k,
e.g. slices of a fused qkv output, are copied first by Liger and the rotated copies returned). It has no GPT-J
(interleaved) layout and no partial rotary dim: those fall back to the vectorised PyTorch path (torch_native.py).
"""

from __future__ import annotations

import torch
from liger_kernel.ops.rope import LigerRopeFunction
from torch import nn


def cos_sin_cache(rotary_dim: int, max_position_embeddings: int, base: float) -> torch.Tensor:
    """vLLM's RotaryEmbedding._compute_cos_sin_cache, in fp32 on the CPU: [max_position_embeddings, rotary_dim]."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float, device="cpu") / rotary_dim))
    t = torch.arange(max_position_embeddings, dtype=torch.float, device="cpu")
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(
        self, head_size: int, rotary_dim: int, max_position_embeddings: int, base: float, is_neox_style: bool
    ) -> None:
        super().__init__()
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.is_neox_style = is_neox_style
        self.register_buffer(
            "cos_sin_cache", cos_sin_cache(rotary_dim, max_position_embeddings, base), persistent=False
        )

    def _apply(self, fn, recurse=True):
        # Module.to(bf16) would round the fp32 table; keep its fp32 values (in fp32 or wider) and move it along.
        table = self.cos_sin_cache
        super()._apply(fn, recurse)
        moved = self.cos_sin_cache
        self.cos_sin_cache = table.to(device=moved.device, dtype=torch.promote_types(moved.dtype, torch.float32))
        return self

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None = None):
        if key is None or not self.is_neox_style or self.rotary_dim != self.head_size:
            return self._forward_native(positions, query, key)
        tokens = query.shape[0]
        cos, sin = self.cos_sin_cache.index_select(0, positions.flatten()).chunk(2, dim=-1)
        cos, sin = cos.repeat(1, 2).unsqueeze(0), sin.repeat(1, 2).unsqueeze(0)  # [1, tokens, head_size]
        q = query.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        k = key.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        q, k = LigerRopeFunction.apply(q, k, cos, sin)
        return q.transpose(1, 2).reshape(query.shape), k.transpose(1, 2).reshape(key.shape)

    def _forward_native(self, positions, query, key):
        """torch_native.py's path, for the layouts Liger does not cover."""
        cos, sin = self.cos_sin_cache.index_select(0, positions.flatten()).unsqueeze(-2).chunk(2, dim=-1)
        query = self._rotate(query, cos, sin)
        key = None if key is None else self._rotate(key, cos, sin)
        return query, key

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        heads = x.reshape(x.shape[0], -1, self.head_size)
        rot = heads[..., : self.rotary_dim]
        if self.is_neox_style:
            x1, x2 = rot.chunk(2, dim=-1)
        else:
            x1, x2 = rot[..., ::2], rot[..., 1::2]
        o1 = (x1 * cos - x2 * sin).to(x.dtype)
        o2 = (x2 * cos + x1 * sin).to(x.dtype)
        rot = torch.cat((o1, o2), dim=-1) if self.is_neox_style else torch.stack((o1, o2), dim=-1).flatten(-2)
        if self.rotary_dim < self.head_size:
            rot = torch.cat((rot, heads[..., self.rotary_dim :]), dim=-1)
        return rot.reshape(x.shape)

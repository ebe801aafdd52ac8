"""Rotary position embedding (vLLM RotaryEmbedding.forward_native) in plain PyTorch. Also the float64 oracle.

The cos/sin table is built exactly as vLLM's `_compute_cos_sin_cache` does: inverse frequencies, angles and
cos/sin all in fp32, on the CPU at construction, stored as one [max_position_embeddings, rotary_dim] buffer
(cos half | sin half). It is a non-persistent buffer that stays fp32 when the module is cast to bf16 (a bf16 table
alone would be off by ~2^-9 and fail the tolerance); cast to float64 it keeps the same fp32 values, so the oracle
rotates with exactly the table every implementation uses. The rotation itself is done in fp32 (float64 for the
oracle) and rounded once.
"""

from __future__ import annotations

import torch

from fastkernels.fp32_buffers import KeepsFp32Buffers


def cos_sin_cache(rotary_dim: int, max_position_embeddings: int, base: float) -> torch.Tensor:
    """vLLM's RotaryEmbedding._compute_cos_sin_cache, in fp32 on the CPU: [max_position_embeddings, rotary_dim]."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float, device="cpu") / rotary_dim))
    t = torch.arange(max_position_embeddings, dtype=torch.float, device="cpu")
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


class RotaryEmbedding(KeepsFp32Buffers):
    fp32_buffers = ("cos_sin_cache",)  # Module.to(bf16) must not round the table

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

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None = None):
        positions = positions.flatten()
        cos_sin = self.cos_sin_cache.index_select(0, positions)
        cos, sin = cos_sin.chunk(2, dim=-1)
        query = self._rotate(query, cos, sin)
        key = None if key is None else self._rotate(key, cos, sin)
        return query, key

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        heads = x.reshape(x.shape[0], -1, self.head_size).to(compute)
        rot, passed = heads[..., : self.rotary_dim], heads[..., self.rotary_dim :]
        cos, sin = cos.unsqueeze(-2).to(compute), sin.unsqueeze(-2).to(compute)
        if self.is_neox_style:
            x1, x2 = rot.chunk(2, dim=-1)
        else:
            x1, x2 = rot[..., ::2], rot[..., 1::2]
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
        if self.is_neox_style:
            rot = torch.cat((o1, o2), dim=-1)
        else:
            rot = torch.stack((o1, o2), dim=-1).flatten(-2)
        return torch.cat((rot, passed), dim=-1).reshape(x.shape).to(x.dtype)

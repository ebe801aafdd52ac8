"""Rotary embedding as a vectorised PyTorch forward over a precomputed cos/sin cache (vLLM
RotaryEmbedding.forward_native), with the table kept in fp32: bf16 q/k times the fp32 cos/sin promotes inside each
elementwise kernel, so the math is fp32 and the result is rounded once (vLLM's own table is cast to the model dtype,
which costs ~2^-9 relative error and would not pass the float64 check).

The table is built exactly as vLLM's _compute_cos_sin_cache (fp32, CPU, at construction), the same bits as the
eager module's. Liger-Kernel's rope (liger.py) covers only the neox layout with rotary_dim == head_size; this is
the production path for the GPT-J (interleaved) layout and for partial rotary dims. Llama-3.1's llama3 frequency
scaling is not part of this task (a separate task).
"""

from __future__ import annotations

import torch
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
        positions = positions.flatten()
        cos, sin = self.cos_sin_cache.index_select(0, positions).unsqueeze(-2).chunk(2, dim=-1)
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
        if self.is_neox_style:
            rot = torch.cat((o1, o2), dim=-1)
        else:
            rot = torch.stack((o1, o2), dim=-1).flatten(-2)
        if self.rotary_dim < self.head_size:
            rot = torch.cat((rot, heads[..., self.rotary_dim :]), dim=-1)
        return rot.reshape(x.shape)

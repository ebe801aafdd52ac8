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

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor and the fp32 cos/sin table (the same bits for every implementation); this
# one differs in how it rotates: bf16 q/k times the fp32 table, rounded per half, as vLLM's forward_native does.
_eager = import_file(Path(__file__).with_name("rotary_embedding.py"), namespace="tasks.rotary_embedding")


class RotaryEmbedding(_eager.RotaryEmbedding):
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

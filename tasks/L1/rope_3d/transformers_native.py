"""transformers' VJEPA2RopeAttention.apply_rotary_embeddings structure (three rotate_queries_or_keys calls, each
repeat / unflatten / stack / flatten / multiply-add, then a cat) run in x's dtype, with one change: the angle
table is built in fp32 and cast to x's dtype, because transformers' bf16 angles (pos * omega rounded to bf16) are
off by up to ~0.06 rad and fail the task's tolerance."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("rope_3d.py"), namespace="tasks.rope_3d")


def _rotate(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1]
    omega = 1.0 / _eager.THETA ** (torch.arange(d // 2, dtype=torch.float32, device=x.device) / (d / 2.0))
    freq = pos.to(torch.float32)[:, None, None] * omega
    sin, cos = freq.sin().to(x.dtype).repeat(1, 1, 2), freq.cos().to(x.dtype).repeat(1, 1, 2)
    y1, y2 = x.unflatten(-1, (-1, 2)).unbind(dim=-1)
    y = torch.stack((-y2, y1), dim=-1).flatten(-2)
    return (x * cos) + (y * sin)


class VJEPA2RotaryEmbedding3D(_eager.VJEPA2RotaryEmbedding3D):
    def forward(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        axes = self.positions(position_ids)
        return self._native(q, axes), self._native(k, axes)

    def _native(self, x: torch.Tensor, axes) -> torch.Tensor:
        d = self.axis_dim
        parts = [_rotate(x[..., i * d:(i + 1) * d], pos) for i, pos in enumerate(axes)]
        if 3 * d < self.head_dim:
            parts.append(x[..., 3 * d:])
        return torch.cat(parts, dim=-1)

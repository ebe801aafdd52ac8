"""V-JEPA 2's 3-D rotary position embedding of video tokens (transformers VJEPA2RopeAttention
.apply_rotary_embeddings / rotate_queries_or_keys) in plain PyTorch. Also the float64 oracle.

Token id n of a clip sits at frame n // grid_size^2, row (n % grid_size^2) // grid_size, column n % grid_size.
head_dim is cut into three segments of d = 2 * ((head_dim // 3) // 2) channels (frame, row, column); channels past
3d pass through. Within a segment, with m = d / 2 and angles a_i = pos * theta^(-i / m) (i < m), channel j is
x_j * cos(a_{j mod m}) + y_j * sin(a_{j mod m}) where y = (-x_1, x_0, -x_3, x_2, ...): V-JEPA 2 repeats its m angles
twice along the segment rather than once per channel pair, and this task keeps that quirk. transformers computes
the angles in x's dtype; this task computes them, and everything else, in at least fp32 and rounds once.
"""

from __future__ import annotations

import torch
from torch import nn

THETA = 10000.0


def rotate(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """rotate_queries_or_keys on x [..., tokens, heads, d] with positions pos [tokens], in x's dtype."""
    d = x.shape[-1]
    omega = torch.arange(d // 2, dtype=x.dtype, device=x.device) / (d / 2.0)
    omega = 1.0 / THETA**omega
    freq = pos.to(x.dtype)[:, None, None] * omega  # [tokens, 1, d/2]
    sin, cos = freq.sin().repeat(1, 1, 2), freq.cos().repeat(1, 1, 2)
    y1, y2 = x.unflatten(-1, (-1, 2)).unbind(dim=-1)
    y = torch.stack((-y2, y1), dim=-1).flatten(-2)
    return x * cos + y * sin


class VJEPA2RotaryEmbedding3D(nn.Module):
    def __init__(self, head_dim: int, grid_size: int) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.grid_size = grid_size
        self.axis_dim = 2 * ((head_dim // 3) // 2)

    def positions(self, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(frame, row, column) of each token id, as VJEPA2RopeAttention.get_position_ids computes them."""
        per_frame = self.grid_size * self.grid_size
        frame = position_ids // per_frame
        within = position_ids - per_frame * frame
        row = within // self.grid_size
        return frame, row, within - self.grid_size * row

    def forward(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        compute = torch.promote_types(q.dtype, torch.float32)
        axes = self.positions(position_ids)
        return self._rotate_axes(q, axes, compute), self._rotate_axes(k, axes, compute)

    def _rotate_axes(self, x: torch.Tensor, axes, compute: torch.dtype) -> torch.Tensor:
        h = x.to(compute)
        d = self.axis_dim
        parts = [rotate(h[..., i * d:(i + 1) * d], pos) for i, pos in enumerate(axes)]
        return torch.cat(parts + [h[..., 3 * d:]], dim=-1).to(x.dtype)

"""transformers' apply_rotary_pos_emb_vision (Qwen2-VL): q * cos + rotate_half(q) * sin with the duplicated
[tokens, head_dim] cos/sin, q and k upcast to fp32 and rounded once. vLLM runs the same math in PyTorch on CUDA
unless flash-attn's rotary kernel is installed (it is not here)."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("vision_rope_2d.py"), namespace="tasks.vision_rope_2d")


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class VisionRotaryEmbedding2D(_eager.VisionRotaryEmbedding2D):
    def forward(self, grid_positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor):
        cos, sin = self.cos_sin(grid_positions)
        cos, sin = torch.cat((cos, cos), dim=-1).unsqueeze(-2), torch.cat((sin, sin), dim=-1).unsqueeze(-2)
        qf, kf = q.float(), k.float()
        q_embed = (qf * cos + rotate_half(qf) * sin).to(q.dtype)
        k_embed = (kf * cos + rotate_half(kf) * sin).to(k.dtype)
        return q_embed, k_embed

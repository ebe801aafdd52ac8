"""Video patchify in plain PyTorch (diffusers HunyuanVideoPatchEmbed): a Conv3d whose kernel equals its stride cuts
[batch, in_chans, frames, height, width] into non-overlapping (t, h, w) tubelets and projects each to embed_dim;
flatten(2).transpose(1, 2) turns the result into tokens [batch, tubelets, embed_dim] (frame-major, then rows, then
columns). Computed in at least fp32 and rounded once to x's dtype, so the same module in float64 is the oracle.

Weights are drawn N(0, 1 / (in_chans * t * h * w)) (variance preserving, like trained projections); bias N(0, 0.5^2)
so a kernel that drops it fails.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class HunyuanVideoPatchEmbed(nn.Module):
    def __init__(self, patch_size: int | list[int] = 16, in_chans: int = 3, embed_dim: int = 768) -> None:
        super().__init__()
        self.patch_size = (patch_size,) * 3 if isinstance(patch_size, int) else tuple(patch_size)
        self.in_chans = in_chans
        self.embed_dim = embed_dim
        fan_in = in_chans * math.prod(self.patch_size)
        self.weight = nn.Parameter(torch.randn(embed_dim, in_chans, *self.patch_size) / math.sqrt(fan_in))
        self.bias = nn.Parameter(torch.randn(embed_dim) * 0.5)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(hidden_states.dtype, torch.float32)
        out = F.conv3d(hidden_states.to(compute), self.weight.to(compute), self.bias.to(compute),
                       stride=self.patch_size)
        return out.flatten(2).transpose(1, 2).to(hidden_states.dtype)

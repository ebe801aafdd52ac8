"""GroupNorm in plain PyTorch, torch.nn.GroupNorm semantics (what diffusers' ResnetBlock2D, UNet mid/up blocks and
the VAE use): x [batch, channels, *spatial] is split into num_groups groups of channels; each (sample, group) is
normalised by its own mean and biased variance, then scaled and shifted per channel. Also the float64 oracle: it
computes in at least fp32 and rounds once to x's dtype."""

from __future__ import annotations

import torch
from torch import nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels {num_channels} is not divisible by num_groups {num_groups}")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(num_channels))
            self.bias = nn.Parameter(torch.zeros(num_channels))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        batch = x.shape[0]
        h = x.to(compute).reshape(batch, self.num_groups, -1)
        mean = h.mean(dim=-1, keepdim=True)
        centered = h - mean
        variance = centered.pow(2).mean(dim=-1, keepdim=True)
        out = (centered * torch.rsqrt(variance + self.eps)).reshape(x.shape)
        if self.weight is not None:
            broadcast = (1, -1) + (1,) * (x.dim() - 2)
            out = out * self.weight.to(compute).view(broadcast) + self.bias.to(compute).view(broadcast)
        return out.to(x.dtype)

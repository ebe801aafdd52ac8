"""Channels-first LayerNorm (timm LayerNorm2d): each pixel of an NCHW tensor normalised over its C channels, then
per-channel weight and bias. ConvNeXt(V2)'s stem and downsampling norm. Plain PyTorch, also the float64 oracle:
biased variance, eps inside the square root, fp32 math, one rounding to x's dtype."""

from __future__ import annotations

import torch
from torch import nn


class LayerNorm2d(nn.Module):
    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.num_channels = num_channels
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        mean = h.mean(dim=1, keepdim=True)
        centered = h - mean
        variance = centered.pow(2).mean(dim=1, keepdim=True)
        out = centered * torch.rsqrt(variance + self.eps)
        shape = (1, -1, 1, 1)
        return (out * self.weight.to(compute).view(shape) + self.bias.to(compute).view(shape)).to(x.dtype)

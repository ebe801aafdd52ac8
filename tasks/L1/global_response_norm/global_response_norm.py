"""Global Response Normalization (ConvNeXtV2; timm GlobalResponseNorm) in plain PyTorch. Also the float64 oracle.

Per image and channel, g = ||x||_2 over the spatial positions; n = g / (mean of g over the channels + eps);
out = x + weight * (x * n) + bias. Computed in fp32 (float64 for the oracle) and rounded once. channels_last=True
is ConvNeXtV2's block layout (x [batch, height, width, dim], after the first pointwise linear); False is NCHW.
"""

from __future__ import annotations

import torch
from torch import nn


class GlobalResponseNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6, channels_last: bool = True) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.channels_last = channels_last
        self.spatial_dim = (1, 2) if channels_last else (2, 3)
        self.channel_dim = -1 if channels_last else 1
        self.wb_shape = (1, 1, 1, -1) if channels_last else (1, -1, 1, 1)
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        g = h.pow(2).sum(dim=self.spatial_dim, keepdim=True).sqrt()
        n = g / (g.mean(dim=self.channel_dim, keepdim=True) + self.eps)
        weight = self.weight.to(compute).view(self.wb_shape)
        bias = self.bias.to(compute).view(self.wb_shape)
        return (h + weight * (h * n) + bias).to(x.dtype)

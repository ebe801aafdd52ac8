"""Depthwise 2-D convolution (torch.nn.Conv2d with groups = in_channels = out_channels): every channel convolved
with its own kernel_size x kernel_size filter. ConvNeXt's 7x7 token mixer, MobileNet / EfficientNet's 3x3 and 5x5
depthwise stage, YOLOv10's stride-2 SCDown. Plain PyTorch, computed in fp32 (float64 for the oracle), rounded once.

Weights are drawn N(0, 1/kernel_size^2), the variance-preserving scale of a trained filter (nn.Conv2d's default
init shrinks activations); bias, when present, N(0, 0.5^2) so a kernel that drops it fails.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class DepthwiseConv2d(nn.Module):
    def __init__(self, channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = True) -> None:
        super().__init__()
        self.channels = channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.weight = nn.Parameter(torch.randn(channels, 1, kernel_size, kernel_size) / kernel_size)
        self.register_parameter("bias", nn.Parameter(torch.randn(channels) * 0.5) if bias else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        bias = None if self.bias is None else self.bias.to(compute)
        out = F.conv2d(x.to(compute), self.weight.to(compute), bias, self.stride, self.padding, 1, self.channels)
        return out.to(x.dtype)

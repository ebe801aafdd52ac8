"""2-D convolution in plain PyTorch (torch.nn.Conv2d's interface: square kernel, symmetric zero padding, one
stride), computed in at least fp32 and rounded once to x's dtype, so the same module in float64 is the oracle.

Weights are drawn N(0, 1 / (in_channels * kernel_size^2)), the variance-preserving scale of trained convolutions
(nn.Conv2d's default init shrinks activations ~1.7x, so stacked L2/L3 tasks would end with outputs too small for
atol to see errors); bias, when present, N(0, 0.5^2) so a kernel that drops it fails.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Conv2d(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 bias: bool = True) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        fan_in = in_channels * kernel_size * kernel_size
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) / math.sqrt(fan_in))
        self.register_parameter("bias", nn.Parameter(torch.randn(out_channels) * 0.5) if bias else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        bias = None if self.bias is None else self.bias.to(compute)
        out = F.conv2d(x.to(compute), self.weight.to(compute), bias, self.stride, self.padding)
        return out.to(x.dtype)

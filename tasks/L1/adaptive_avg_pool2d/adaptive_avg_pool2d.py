"""Adaptive average pooling of an NCHW tensor (torch.nn.AdaptiveAvgPool2d): output cell (i, j) of an
output_size x output_size grid averages input rows floor(i H / out) .. ceil((i + 1) H / out) - 1 and the same
columns. With output_size 1 it is the global average pool before every classifier head. Also the float64 oracle:
F.adaptive_avg_pool2d on an fp32 (float64) copy, rounded once."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class AdaptiveAvgPool2d(nn.Module):
    def __init__(self, output_size: int) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        return F.adaptive_avg_pool2d(x.to(compute), self.output_size).to(x.dtype)

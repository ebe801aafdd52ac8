"""Hard swish (torch.nn.Hardswish, MobileNetV3's activation): x * relu6(x + 3) / 6, in plain PyTorch. Also the
float64 oracle: computed in at least fp32, rounded once to x's dtype."""

from __future__ import annotations

import torch
from torch import nn


class Hardswish(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        return (h * (h + 3).clamp(0, 6) / 6).to(x.dtype)

"""SiluAndMul in plain PyTorch: silu(x[..., :d]) * x[..., d:]. Also the float64 oracle: it computes in at least fp32
and rounds once to x's dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SiluAndMul(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        compute = torch.promote_types(x.dtype, torch.float32)
        gate, up = x[..., :d].to(compute), x[..., d:].to(compute)
        return (F.silu(gate) * up).to(x.dtype)

"""GeluAndMul in plain PyTorch: gelu(x[..., :d], approximate) * x[..., d:]. Also the float64 oracle: it computes in
at least fp32 and rounds once to x's dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GeluAndMul(nn.Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"unknown approximate {approximate!r}")
        self.approximate = approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        compute = torch.promote_types(x.dtype, torch.float32)
        gate, up = x[..., :d].to(compute), x[..., d:].to(compute)
        return (F.gelu(gate, approximate=self.approximate) * up).to(x.dtype)

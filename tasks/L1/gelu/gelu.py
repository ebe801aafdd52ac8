"""GELU (torch.nn.GELU: erf, or the tanh approximation that HF calls gelu_pytorch_tanh) in plain PyTorch. Also
the float64 oracle: it computes in at least fp32 and rounds once to x's dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GELU(nn.Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"unknown approximate {approximate!r}")
        self.approximate = approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        return F.gelu(x.to(compute), approximate=self.approximate).to(x.dtype)

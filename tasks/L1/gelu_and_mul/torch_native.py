"""GeluAndMul as vLLM's GeluAndMul.forward_native: F.gelu(x[..., :d], approximate) * x[..., d:] in x's own dtype
(two PyTorch elementwise kernels, each rounding to bf16)."""

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
        return F.gelu(x[..., :d], approximate=self.approximate) * x[..., d:]

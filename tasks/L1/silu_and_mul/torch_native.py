"""SiluAndMul as vLLM's SiluAndMul.forward_native: F.silu(x[..., :d]) * x[..., d:] in x's own dtype
(two PyTorch elementwise kernels, each rounding to bf16)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SiluAndMul(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]

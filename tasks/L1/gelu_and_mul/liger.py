"""GeluAndMul through Liger-Kernel's Triton GEGLU kernel (LigerGELUMulFunction, liger_kernel.ops.geglu, the kernel of
LigerGEGLUMLP). The kernel implements only the tanh approximation, 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))
in fp32, rounded to x's dtype and multiplied by up in x's dtype; approximate="none" (exact erf GELU) falls back to
vLLM's forward_native. It takes gate and up as two tensors and makes them contiguous, so x's halves are copied
first (Liger's own MLP feeds it two separate projections)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from liger_kernel.ops.geglu import LigerGELUMulFunction
from torch import nn


class GeluAndMul(nn.Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"unknown approximate {approximate!r}")
        self.approximate = approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        if self.approximate != "tanh":
            return F.gelu(x[..., :d]) * x[..., d:]
        gate, up = x.chunk(2, dim=-1)
        return LigerGELUMulFunction.apply(gate, up)

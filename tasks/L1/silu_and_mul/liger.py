"""SiluAndMul through Liger-Kernel's Triton SwiGLU kernel (LigerSiLUMulFunction, as in LigerSwiGLUMLP).

The kernel takes gate and up as two tensors of the same shape and makes them contiguous, so the two halves of x
are copied before the kernel runs (Liger's own MLP feeds it two separate projections instead). Math: silu(gate) in
fp32, rounded to x's dtype, then multiplied by up in x's dtype.
"""

from __future__ import annotations

import torch
from liger_kernel.ops.swiglu import LigerSiLUMulFunction
from torch import nn


class SiluAndMul(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return LigerSiLUMulFunction.apply(gate, up)

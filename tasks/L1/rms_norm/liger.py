"""RMSNorm through Liger-Kernel's Triton kernels: LigerRMSNorm, and LigerFusedAddRMSNorm for the residual path
(casting_mode='llama', as Liger patches Llama models)."""

from __future__ import annotations

import torch
from liger_kernel.ops import LigerFusedAddRMSNormFunction, LigerRMSNormFunction
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.variance_epsilon = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        if residual is None:
            return LigerRMSNormFunction.apply(x, self.weight, self.variance_epsilon, 0.0, "llama", False, None)
        out, h = LigerFusedAddRMSNormFunction.apply(x, residual, self.weight, self.variance_epsilon, 0.0, "llama", False)
        return out, h

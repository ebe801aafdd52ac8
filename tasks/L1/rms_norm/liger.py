"""RMSNorm through Liger-Kernel's Triton kernel (casting_mode='llama', as Liger patches Llama models)."""

from __future__ import annotations

import torch
from liger_kernel.transformers.rms_norm import LigerRMSNorm
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.norm = LigerRMSNorm(hidden_size, eps=eps, casting_mode="llama", in_place=False)
        self.weight = self.norm.weight

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        h = x if residual is None else x + residual
        out = self.norm(h)
        return out if residual is None else (out, h)

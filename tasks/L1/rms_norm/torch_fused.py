"""RMSNorm through torch.nn.functional.rms_norm (PyTorch's fused kernel where it has one)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.variance_epsilon = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        h = x if residual is None else x + residual
        out = F.rms_norm(h, (self.hidden_size,), self.weight, self.variance_epsilon)
        return out if residual is None else (out, h)

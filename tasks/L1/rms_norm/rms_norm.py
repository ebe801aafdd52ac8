"""RMSNorm in plain PyTorch (vLLM's forward_native). Also the float64 oracle: it computes in at least fp32."""

from __future__ import annotations

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.variance_epsilon = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        if residual is not None:
            h = h + residual.to(compute)
        variance = h.pow(2).mean(dim=-1, keepdim=True)
        out = (h * torch.rsqrt(variance + self.variance_epsilon) * self.weight.to(compute)).to(x.dtype)
        if residual is None:
            return out
        return out, h.to(x.dtype)

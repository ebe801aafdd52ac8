"""LayerNorm in plain PyTorch, torch.nn.LayerNorm semantics over the last dimension (biased variance, eps inside
the square root, then weight and bias). Also the float64 oracle: it computes in at least fp32 and rounds once to
x's dtype."""

from __future__ import annotations

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5, elementwise_affine: bool = True) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(normalized_shape))
            self.bias = nn.Parameter(torch.zeros(normalized_shape))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        mean = h.mean(dim=-1, keepdim=True)
        centered = h - mean
        variance = centered.pow(2).mean(dim=-1, keepdim=True)
        out = centered * torch.rsqrt(variance + self.eps)
        if self.weight is not None:
            out = out * self.weight.to(compute) + self.bias.to(compute)
        return out.to(x.dtype)

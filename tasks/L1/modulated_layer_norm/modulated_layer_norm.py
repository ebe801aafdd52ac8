"""adaLN modulation of a LayerNorm (DiT's modulate(norm(x), shift, scale); SGLang's LayerNormScaleShift) in plain
PyTorch: LayerNorm over the last dimension (optionally affine), then x * (1 + scale) + shift with one (shift, scale)
row per sample broadcast over its tokens. Also the float64 oracle: fp32 (or better) throughout, rounded once.

With elementwise_affine, weight ~ N(1, 0.1^2) and bias ~ N(0, 0.1^2) are drawn here (not ones and zeros, which would
hide a kernel that ignores them); the manifest cannot redraw them because the usual cases have no affine.
"""

from __future__ import annotations

import torch
from torch import nn


class LayerNormScaleShift(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6, elementwise_affine: bool = False) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden_size))
            self.bias = nn.Parameter(0.1 * torch.randn(hidden_size))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        mean = h.mean(dim=-1, keepdim=True)
        centered = h - mean
        out = centered * torch.rsqrt(centered.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        if self.weight is not None:
            out = out * self.weight.to(compute) + self.bias.to(compute)
        return (out * (1 + scale.to(compute)) + shift.to(compute)).to(x.dtype)

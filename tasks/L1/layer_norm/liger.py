"""LayerNorm through Liger-Kernel's Triton kernel: LigerLayerNormFunction.apply(X, W, B, eps)
(liger_kernel.ops.layer_norm, as LigerLayerNorm calls it). One program per row; mean and variance in fp32,
y = (x - mean) * rstd * W + B stored in x's dtype. The kernel needs a weight and a bias, so a LayerNorm without
elementwise affine falls back to F.layer_norm (no task case uses that)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from liger_kernel.ops.layer_norm import LigerLayerNormFunction
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
        if self.weight is None:
            return F.layer_norm(x, self.normalized_shape, None, None, self.eps)
        return LigerLayerNormFunction.apply(x, self.weight, self.bias, self.eps)

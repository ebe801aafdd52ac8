"""y = x @ weight.T + bias (torch.nn.Linear's interface, which vLLM's ReplicatedLinear computes on one GPU).

The eager module is F.linear itself; run in float64 it is the oracle. Weights are drawn N(0, 1/in_features), the
variance-preserving scale of trained projection weights (nn.Linear's default init shrinks activations ~1.7x per
layer, so stacked L2/L3 tasks would end with outputs too small for atol to see errors); bias, when present,
N(0, 0.5^2) so a kernel that drops it fails.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.register_parameter("bias", nn.Parameter(torch.randn(out_features) * 0.5) if bias else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)

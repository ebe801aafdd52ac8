"""torch.nn.functional.linear: cuBLAS / cuBLASLt GEMM on CUDA (bias fused in the Lt epilogue where it applies),
what vLLM's UnquantizedLinearMethod calls for ReplicatedLinear / ColumnParallelLinear on one GPU. Parameters are
left uninitialised, as in vLLM: the reference weights are loaded into them."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.register_parameter("bias", nn.Parameter(torch.empty(out_features)) if bias else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)

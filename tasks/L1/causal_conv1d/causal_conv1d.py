"""Depthwise causal conv1d (causal-conv1d's causal_conv1d_fn) in plain PyTorch. Also the float64 oracle.

out[b, d, t] = bias[d] + sum_k weight[d, k] * x[b, d, t - (width - 1) + k], zeros before t = 0, then SiLU when
activation is "silu". The width taps are summed one shifted slice at a time in fp32 (float64 for the oracle) and
the result is rounded once to x's dtype.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalConv1d(nn.Module):
    def __init__(self, dim: int, width: int, bias: bool = True, activation: str | None = "silu") -> None:
        super().__init__()
        if activation not in (None, "silu", "swish"):
            raise ValueError(f"activation {activation!r} is not None, 'silu' or 'swish'")
        self.dim = dim
        self.width = width
        self.activation = activation
        # nn.Conv1d(dim, dim, width, groups=dim)'s init, with the weight stored as causal_conv1d_fn takes it.
        bound = 1.0 / math.sqrt(width)
        self.weight = nn.Parameter(torch.empty(dim, width).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(dim).uniform_(-bound, bound)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        seqlen = x.shape[-1]
        padded = F.pad(x.to(compute), (self.width - 1, 0))
        weight = self.weight.to(compute)
        out = torch.zeros(x.shape, dtype=compute, device=x.device)
        for k in range(self.width):
            out += weight[:, k, None] * padded[..., k:k + seqlen]
        if self.bias is not None:
            out += self.bias.to(compute)[:, None]
        if self.activation is not None:
            out = F.silu(out)
        return out.to(x.dtype)

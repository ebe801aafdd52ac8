"""SwinV2's scaled cosine window attention (the core of transformers Swinv2SelfAttention) in plain PyTorch. Also
the float64 oracle.

Per window and head: scores = normalize(q) normalize(k)^T * exp(min(logit_scale, log 100)) + relative_position_bias
(SwinV2's 16 * sigmoid(cpb_mlp(coords)) gathered to [heads, N, N], passed in), softmax over the window's N tokens,
times v. fp32 (float64 for the oracle), rounded once. logit_scale is the module's per-head parameter, as in SwinV2.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Swinv2WindowAttention(nn.Module):
    def __init__(self, num_heads: int, head_dim: int, window_size: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.window_size = window_size
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))))

    def scale(self, dtype: torch.dtype) -> torch.Tensor:
        """exp(min(logit_scale, log 100)) per head, [num_heads, 1, 1]."""
        return torch.clamp(self.logit_scale.to(dtype), max=math.log(1.0 / 0.01)).exp()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor):
        compute = torch.promote_types(q.dtype, torch.float32)
        qn = F.normalize(q.to(compute), dim=-1)
        kn = F.normalize(k.to(compute), dim=-1)
        scores = qn @ kn.transpose(-2, -1) * self.scale(compute) + relative_position_bias.to(compute)
        return (torch.softmax(scores, dim=-1) @ v.to(compute)).to(q.dtype)

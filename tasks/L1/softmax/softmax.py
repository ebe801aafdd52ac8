"""Row softmax over the last dimension in plain PyTorch, computed in at least fp32 and rounded once to x's dtype.
Also the float64 oracle."""

from __future__ import annotations

import torch
from torch import nn


class Softmax(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        return torch.softmax(x.to(compute), dim=-1).to(x.dtype)

"""Row softmax as production code writes it: torch.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype)
(PyTorch's softmax kernel reading bf16 and accumulating in fp32, then a cast kernel)."""

from __future__ import annotations

import torch
from torch import nn


class Softmax(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype)

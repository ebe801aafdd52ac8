"""QuickGELU (vLLM QuickGELU, OpenAI CLIP's and the Qwen2-VL vision tower's activation): x * sigmoid(1.702 x), in
plain PyTorch. Also the float64 oracle: computed in at least fp32, rounded once to x's dtype."""

from __future__ import annotations

import torch
from torch import nn


class QuickGELU(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        return (h * torch.sigmoid(1.702 * h)).to(x.dtype)

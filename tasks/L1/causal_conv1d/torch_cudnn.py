"""Causal conv1d as transformers' Mamba torch path runs it: nn.Conv1d(groups=dim, padding=width-1) through
F.conv1d (cuDNN's depthwise kernel on a GPU), cut to the first seqlen outputs, then SiLU on the bf16 result."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("causal_conv1d.py"), namespace="tasks.causal_conv1d")


class CausalConv1d(_eager.CausalConv1d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.conv1d(x, self.weight.unsqueeze(1), self.bias, padding=self.width - 1, groups=self.dim)
        out = out[..., : x.shape[-1]]
        return F.silu(out) if self.activation is not None else out

"""The vision-transformer MLP of SigLIP / SigLIP-2 (vLLM and transformers SiglipMLP) and DINOv3 (its non-gated
MLP): fc2(act(fc1(x))) with biases, act GELU (tanh for gelu_pytorch_tanh, erf for gelu). Built from the linear and
gelu tasks via component(...), so this one file is the eager module (in float64, the oracle) and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component

APPROXIMATE = {"gelu_pytorch_tanh": "tanh", "gelu": "none"}


class SiglipMLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int, hidden_act: str = "gelu_pytorch_tanh") -> None:
        super().__init__()
        Linear = component("linear")
        GELU = component("gelu")
        self.fc1 = Linear(hidden_size, intermediate_size, bias=True)
        self.activation_fn = GELU(APPROXIMATE[hidden_act])
        self.fc2 = Linear(intermediate_size, hidden_size, bias=True)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.activation_fn(self.fc1(hidden_states)))

"""DLRM's bottom MLP (torchrec DenseArch) built from the linear task: Linear + ReLU for every layer size, the last
included (torchrec's MLP applies its activation after each Perceptron). The Linear class comes from component(...),
so this one file is the eager module and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class DenseArch(nn.Module):
    def __init__(self, in_features: int, layer_sizes: list[int]) -> None:
        super().__init__()
        Linear = component("linear")
        sizes = [in_features, *layer_sizes]
        self.layers = nn.ModuleList(Linear(a, b, bias=True) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            features = torch.relu(layer(features))
        return features

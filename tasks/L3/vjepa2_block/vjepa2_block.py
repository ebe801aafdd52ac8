"""One V-JEPA 2 encoder layer (transformers VJEPA2Layer, no mask, drop_path 0) built from lower tasks:
norm1 -> 3-D rope attention (the spacetime_attention L2 task) -> + residual, norm2 -> MLP (fc1, erf GELU, fc2)
-> + residual.

Every class comes from component(...), so this one file is the eager module (eager components all the way down; in
float64, the oracle) and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class VJEPA2Layer(nn.Module):
    def __init__(self, hidden_size: int, num_attention_heads: int, mlp_ratio: float, grid_size: int,
                 layer_norm_eps: float = 1e-6) -> None:
        super().__init__()
        LayerNorm = component("layer_norm")
        Attention = component("spacetime_attention")
        Linear = component("linear")
        GELU = component("gelu")
        mlp_hidden = int(hidden_size * mlp_ratio)
        self.norm1 = LayerNorm(hidden_size, eps=layer_norm_eps)
        self.attention = Attention(hidden_size, num_attention_heads, grid_size, qkv_bias=True)
        self.norm2 = LayerNorm(hidden_size, eps=layer_norm_eps)
        self.mlp = nn.Module()  # VJEPA2MLP: the same state-dict keys as transformers (mlp.fc1.*, mlp.fc2.*)
        self.mlp.fc1 = Linear(hidden_size, mlp_hidden, bias=True)
        self.mlp.activation = GELU("none")
        self.mlp.fc2 = Linear(mlp_hidden, hidden_size, bias=True)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = self.attention(self.norm1(hidden_states)) + hidden_states
        mlp = self.mlp
        return mlp.fc2(mlp.activation(mlp.fc1(self.norm2(hidden_states)))) + hidden_states

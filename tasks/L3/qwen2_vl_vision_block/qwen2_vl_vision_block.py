"""One block of the Qwen2-VL vision tower over one image (vLLM Qwen2VisionBlock / transformers Qwen2VLVisionBlock):
h = x + attn(norm1(x)) with the 2-D rope attention of qwen2_vl_vision_attention, out = h + mlp(norm2(h)) with the
fc1 -> QuickGELU -> fc2 MLP. Built from layer_norm, linear and quick_gelu (L1) and qwen2_vl_vision_attention (L2)
via component(...), so this one file is the eager module (in float64, the oracle) and the production one.
Submodule names follow vLLM (norm1, attn, norm2, mlp.fc1, mlp.fc2).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class Qwen2VisionMLP(nn.Module):
    """vLLM Qwen2VisionMLP: fc2(QuickGELU(fc1(x))), biases on both."""

    def __init__(self, in_features: int, hidden_features: int) -> None:
        super().__init__()
        Linear = component("linear")
        self.fc1 = Linear(in_features, hidden_features, bias=True)
        self.act = component("quick_gelu")()
        self.fc2 = Linear(hidden_features, in_features, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Qwen2VisionBlock(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, mlp_ratio: int, max_grid_size: int) -> None:
        super().__init__()
        LayerNorm = component("layer_norm")
        Qwen2VisionAttention = component("qwen2_vl_vision_attention")
        self.norm1 = LayerNorm(embed_dim, eps=1e-6)
        self.norm2 = LayerNorm(embed_dim, eps=1e-6)
        self.attn = Qwen2VisionAttention(embed_dim, num_heads, max_grid_size)
        self.mlp = Qwen2VisionMLP(embed_dim, mlp_ratio * embed_dim)

    def forward(self, hidden_states: torch.Tensor, grid_positions: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states), grid_positions)
        return hidden_states + self.mlp(self.norm2(hidden_states))

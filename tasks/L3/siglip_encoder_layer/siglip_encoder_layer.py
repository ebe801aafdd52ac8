"""One SigLIP vision encoder layer (transformers / vLLM SiglipEncoderLayer): pre-norm attention and MLP, each added
to the residual stream. Built from the layer_norm (L1), vit_attention and siglip_mlp (L2) tasks via
component(...), so this one file is the eager module (eager components all the way down; in float64, the oracle)
and the production one. Submodule names follow transformers, so a SigLIP checkpoint's layer maps onto it (with q/k/v
merged into qkv_proj, as vLLM loads them).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class SiglipEncoderLayer(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int, num_heads: int, layer_norm_eps: float) -> None:
        super().__init__()
        LayerNorm = component("layer_norm")
        SiglipAttention = component("vit_attention")
        SiglipMLP = component("siglip_mlp")
        self.layer_norm1 = LayerNorm(hidden_size, eps=layer_norm_eps)
        self.self_attn = SiglipAttention(hidden_size, num_heads)
        self.layer_norm2 = LayerNorm(hidden_size, eps=layer_norm_eps)
        self.mlp = SiglipMLP(hidden_size, intermediate_size, "gelu_pytorch_tanh")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(self.layer_norm1(hidden_states))
        return hidden_states + self.mlp(self.layer_norm2(hidden_states))

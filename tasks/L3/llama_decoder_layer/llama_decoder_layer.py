"""One Llama decoder layer (vLLM LlamaDecoderLayer) built from lower tasks: RMSNorm (L1), LlamaAttention and
LlamaMLP (L2, themselves built from L1 tasks). Every class comes from component(...), so this one file is the eager
module (eager components all the way down; in float64, the oracle) and the production one.

forward follows vLLM exactly: without residual, residual = hidden_states and the input norm is plain; with one,
the input norm adds it first (fused add + norm) and returns the sum as the new residual. Returns
(mlp output, residual), the pair the next layer takes.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class LlamaDecoderLayer(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int,
        num_heads: int,
        num_kv_heads: int,
        rope_theta: float,
        max_position_embeddings: int,
        rms_norm_eps: float,
    ) -> None:
        super().__init__()
        RMSNorm = component("rms_norm")
        LlamaAttention = component("llama_attention")
        LlamaMLP = component("llama_mlp")
        self.hidden_size = hidden_size
        self.self_attn = LlamaAttention(hidden_size, num_heads, num_kv_heads, rope_theta, max_position_embeddings)
        self.mlp = LlamaMLP(hidden_size, intermediate_size)
        self.input_layernorm = RMSNorm(hidden_size, eps=rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(hidden_size, eps=rms_norm_eps)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, residual: torch.Tensor | None = None):
        if residual is None:
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
        else:
            hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.self_attn(positions=positions, hidden_states=hidden_states)
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        hidden_states = self.mlp(hidden_states)
        return hidden_states, residual

"""Vision-transformer self-attention (vLLM SiglipAttention; transformers SiglipAttention computes the same with
separate q/k/v projections): qkv_proj -> split heads -> non-causal attention over all patches -> out_proj, biases
everywhere. Built from the linear and encoder_attention tasks via component(...), so this one file is the eager
module (in float64, the oracle) and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class SiglipAttention(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        Linear = component("linear")
        EncoderAttention = component("encoder_attention")
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.qkv_proj = Linear(hidden_size, 3 * hidden_size, bias=True)
        self.attn = EncoderAttention(num_heads, self.head_dim)
        self.out_proj = Linear(hidden_size, hidden_size, bias=True)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden_states.shape
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        heads = (batch, seq, self.num_heads, self.head_dim)
        out = self.attn(q.reshape(heads), k.reshape(heads), v.reshape(heads))
        return self.out_proj(out.reshape(batch, seq, self.hidden_size))

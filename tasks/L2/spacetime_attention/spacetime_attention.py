"""V-JEPA 2's self-attention over video tokens (transformers VJEPA2RopeAttention) built from the L1 tasks:
query / key / value linears -> 3-D rotary embedding of q and k over (frame, row, column) -> non-causal attention
-> proj. Tokens carry their clip order (ids 0..tokens-1, frame-major), as transformers assumes without a mask.

All classes come from component(...), so this one file is the eager module (eager components; in float64, the
oracle) and the production one. The linears work on [batch, tokens, hidden]; the rope and attention tasks take
[batch, tokens, heads, head_dim], so the reshapes between them are views.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class VJEPA2RopeAttention(nn.Module):
    def __init__(self, hidden_size: int, num_attention_heads: int, grid_size: int, qkv_bias: bool = True) -> None:
        super().__init__()
        Linear = component("linear")
        Rope3D = component("rope_3d")
        EncoderAttention = component("encoder_attention")
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.head_dim = hidden_size // num_attention_heads
        self.query = Linear(hidden_size, hidden_size, bias=qkv_bias)
        self.key = Linear(hidden_size, hidden_size, bias=qkv_bias)
        self.value = Linear(hidden_size, hidden_size, bias=qkv_bias)
        self.proj = Linear(hidden_size, hidden_size, bias=True)
        self.rope = Rope3D(self.head_dim, grid_size)
        self.attn = EncoderAttention(num_attention_heads, self.head_dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = hidden_states.shape
        heads = (batch, tokens, self.num_attention_heads, self.head_dim)
        q = self.query(hidden_states).view(heads)
        k = self.key(hidden_states).view(heads)
        v = self.value(hidden_states).view(heads)
        q, k = self.rope(q, k, torch.arange(tokens, device=hidden_states.device))
        return self.proj(self.attn(q, k, v).reshape(batch, tokens, self.hidden_size))

"""Self-attention of the Qwen2-VL vision tower over one image (vLLM Qwen2VisionAttention with a single cu_seqlens
segment): qkv -> split heads -> 2-D rotary embedding of q and k at each patch's (row, col) -> non-causal attention
over the image's patches -> proj, biases on both projections. Built from the linear, vision_rope_2d and
encoder_attention tasks via component(...), so this one file is the eager module (in float64, the oracle) and the
production one. The rope table (theta 10000, as the vision config's rope_theta) lives here rather than in the
vision transformer, so the module is self-contained.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class Qwen2VisionAttention(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, max_grid_size: int) -> None:
        super().__init__()
        Linear = component("linear")
        VisionRotaryEmbedding2D = component("vision_rope_2d")
        EncoderAttention = component("encoder_attention")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = Linear(embed_dim, 3 * embed_dim, bias=True)
        self.rotary_pos_emb = VisionRotaryEmbedding2D(self.head_dim, 10000.0, max_grid_size)
        self.attn = EncoderAttention(num_heads, self.head_dim)
        self.proj = Linear(embed_dim, embed_dim, bias=True)

    def forward(self, hidden_states: torch.Tensor, grid_positions: torch.Tensor) -> torch.Tensor:
        tokens = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        heads = (tokens, self.num_heads, self.head_dim)
        q, k = self.rotary_pos_emb(grid_positions, q.reshape(heads), k.reshape(heads))
        out = self.attn(q.unsqueeze(0), k.unsqueeze(0), v.reshape(heads).unsqueeze(0))
        return self.proj(out.reshape(tokens, self.embed_dim))

"""Mistral's attention block for a prefill (vLLM MistralAttention = LlamaAttention with a sliding window) built from
the L1 tasks: qkv_proj -> split -> neox rotary embedding of q and k -> causal sliding-window GQA attention ->
o_proj. The layout handling is llama_attention's. All classes come from component(...), so this one file is the
eager module (in float64, the oracle) and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class MistralAttention(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int, num_kv_heads: int, rope_theta: float,
                 max_position_embeddings: int, sliding_window: int) -> None:
        super().__init__()
        Linear = component("linear")
        RotaryEmbedding = component("rotary_embedding")
        SlidingWindowAttention = component("sliding_window_attention")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden_size // num_heads
        self.q_size = num_heads * self.head_dim
        self.kv_size = num_kv_heads * self.head_dim
        self.qkv_proj = Linear(hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = Linear(self.q_size, hidden_size, bias=False)
        self.rotary_emb = RotaryEmbedding(self.head_dim, self.head_dim, max_position_embeddings, rope_theta, True)
        self.attn = SlidingWindowAttention(num_heads, num_kv_heads, self.head_dim, sliding_window)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden_states.shape
        q, k, v = self.qkv_proj(hidden_states).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q, k = self.rotary_emb(positions.reshape(-1), q.reshape(batch * seq, self.q_size),
                               k.reshape(batch * seq, self.kv_size))
        out = self.attn(
            q.reshape(batch, seq, self.num_heads, self.head_dim),
            k.reshape(batch, seq, self.num_kv_heads, self.head_dim),
            v.reshape(batch, seq, self.num_kv_heads, self.head_dim),
        )
        return self.o_proj(out.reshape(batch, seq, self.q_size))

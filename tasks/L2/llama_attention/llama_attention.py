"""Llama's attention block for a prefill (vLLM LlamaAttention) built from the L1 tasks:
qkv_proj -> split -> rotary embedding of q and k -> causal GQA attention -> o_proj.

hidden_states are [batch, seq, hidden_size] and positions [batch, seq]. The rotary task works on vLLM's flat
[tokens, heads * head_dim] layout and the attention task on [batch, seq, heads, head_dim]; the reshapes between
them are views where the strides allow. All classes come from component(...), so this one file is the eager module
(eager components; in float64, the oracle) and the production one (production components).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class LlamaAttention(nn.Module):
    def __init__(
        self, hidden_size: int, num_heads: int, num_kv_heads: int, rope_theta: float, max_position_embeddings: int
    ) -> None:
        super().__init__()
        Linear = component("linear")
        RotaryEmbedding = component("rotary_embedding")
        CausalAttention = component("causal_attention")
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden_size // num_heads
        self.q_size = num_heads * self.head_dim
        self.kv_size = num_kv_heads * self.head_dim
        self.qkv_proj = Linear(hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = Linear(self.q_size, hidden_size, bias=False)
        self.rotary_emb = RotaryEmbedding(self.head_dim, self.head_dim, max_position_embeddings, rope_theta, True)
        self.attn = CausalAttention(num_heads, num_kv_heads, self.head_dim)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden_states.shape
        qkv = self.qkv_proj(hidden_states)
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q, k = self.rotary_emb(positions.reshape(-1), q.reshape(batch * seq, self.q_size),
                               k.reshape(batch * seq, self.kv_size))
        attn_output = self.attn(
            q.reshape(batch, seq, self.num_heads, self.head_dim),
            k.reshape(batch, seq, self.num_kv_heads, self.head_dim),
            v.reshape(batch, seq, self.num_kv_heads, self.head_dim),
        )
        return self.o_proj(attn_output.reshape(batch, seq, self.q_size))

"""One Whisper encoder layer (transformers WhisperEncoderLayer with WhisperAttention, no mask) built from the L1
tasks: pre-LayerNorm self-attention (q_proj and v_proj biased, k_proj not; non-causal attention; out_proj) and a
pre-LayerNorm MLP (fc1, erf GELU, fc2), each added to its residual.

LayerNorm, Linear, EncoderAttention and GELU come from component(...), so this one file is the eager module (eager
components all the way down; in float64, the oracle) and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class WhisperEncoderLayer(nn.Module):
    def __init__(self, d_model: int, encoder_attention_heads: int, encoder_ffn_dim: int) -> None:
        super().__init__()
        LayerNorm = component("layer_norm")
        Linear = component("linear")
        EncoderAttention = component("encoder_attention")
        GELU = component("gelu")
        self.embed_dim = d_model
        self.num_heads = encoder_attention_heads
        self.head_dim = d_model // encoder_attention_heads
        self.self_attn_layer_norm = LayerNorm(d_model)
        self.self_attn = nn.Module()  # WhisperAttention: the same state-dict keys as transformers (self_attn.*)
        self.self_attn.q_proj = Linear(d_model, d_model, bias=True)
        self.self_attn.k_proj = Linear(d_model, d_model, bias=False)
        self.self_attn.v_proj = Linear(d_model, d_model, bias=True)
        self.self_attn.out_proj = Linear(d_model, d_model, bias=True)
        self.self_attn.attn = EncoderAttention(encoder_attention_heads, self.head_dim)
        self.final_layer_norm = LayerNorm(d_model)
        self.fc1 = Linear(d_model, encoder_ffn_dim, bias=True)
        self.activation_fn = GELU("none")
        self.fc2 = Linear(encoder_ffn_dim, d_model, bias=True)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden_states.shape
        heads = (batch, seq, self.num_heads, self.head_dim)
        residual = hidden_states
        h = self.self_attn_layer_norm(hidden_states)
        sa = self.self_attn
        attn = sa.attn(sa.q_proj(h).view(heads), sa.k_proj(h).view(heads), sa.v_proj(h).view(heads))
        hidden_states = residual + sa.out_proj(attn.reshape(batch, seq, self.embed_dim))
        residual = hidden_states
        h = self.fc2(self.activation_fn(self.fc1(self.final_layer_norm(hidden_states))))
        return residual + h

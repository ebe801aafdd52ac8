"""FLUX's single-stream DiT block (diffusers FluxSingleTransformerBlock on the joint text + image sequence) built
from lower tasks: AdaLayerNormZeroSingle (SiLU -> linear to shift/scale/gate -> modulated LayerNorm), then in
parallel the attention (dit_attention: q/k/v, qk RMSNorm, FLUX rope, attention) and the MLP input (proj_mlp, tanh
GELU), concatenated and projected back by proj_out, gated, and added to the residual.

Linear, LayerNormScaleShift, FluxSingleAttention and GELU come from component(...), so this one file is the eager
module (eager components all the way down; in float64, the oracle) and the production one. The SiLU of the
conditioning row, the concat, the gate multiply and the residual add stay inline, as diffusers runs them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class FluxSingleTransformerBlock(nn.Module):
    def __init__(self, dim: int, num_attention_heads: int, attention_head_dim: int, mlp_ratio: float,
                 text_seq_len: int, height: int, width: int) -> None:
        super().__init__()
        if dim != num_attention_heads * attention_head_dim:
            raise ValueError("FLUX's attention keeps the width: dim must be num_attention_heads * attention_head_dim")
        Linear = component("linear")
        LayerNormScaleShift = component("modulated_layer_norm")
        Attention = component("dit_attention")
        GELU = component("gelu")
        self.mlp_hidden_dim = int(dim * mlp_ratio)
        self.norm = nn.Module()  # AdaLayerNormZeroSingle: the same state-dict keys as diffusers (norm.linear.*)
        self.norm.linear = Linear(dim, 3 * dim, bias=True)
        self.norm.norm = LayerNormScaleShift(dim, eps=1e-6, elementwise_affine=False)
        self.proj_mlp = Linear(dim, self.mlp_hidden_dim, bias=True)
        self.act_mlp = GELU("tanh")
        self.proj_out = Linear(dim + self.mlp_hidden_dim, dim, bias=True)
        self.attn = Attention(dim, num_attention_heads, attention_head_dim, 1e-6, text_seq_len, height, width)

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        residual = hidden_states
        shift_msa, scale_msa, gate = self.norm.linear(F.silu(temb)).chunk(3, dim=1)
        norm_hidden_states = self.norm.norm(hidden_states, shift_msa[:, None], scale_msa[:, None])
        mlp_hidden_states = self.act_mlp(self.proj_mlp(norm_hidden_states))
        attn_output = self.attn(norm_hidden_states)
        hidden_states = torch.cat([attn_output, mlp_hidden_states], dim=2)
        return residual + gate[:, None] * self.proj_out(hidden_states)

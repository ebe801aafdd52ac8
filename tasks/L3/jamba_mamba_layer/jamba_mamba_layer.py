"""One Jamba Mamba layer with a dense MLP (vLLM JambaMambaDecoderLayer) built from lower tasks: RMSNorm (L1), the
Mamba mixer with Jamba's dt/B/C norms (L2) and the SwiGLU MLP (L2, llama_mlp: Jamba's MLP is the same
gate_up -> SiluAndMul -> down). Every class comes from component(...), so this one file is the eager module (in
float64, the oracle) and the production one.

forward follows vLLM: without residual, residual = hidden_states and the input norm is plain; with one, the norm
adds it first (fused add + norm). pre_ff_layernorm adds the mixer output to the residual the same way. Returns
(MLP output, residual), the pair the next layer takes.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class JambaMambaDecoderLayer(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        mamba_intermediate_size: int,
        mamba_d_state: int,
        mamba_d_conv: int,
        mamba_dt_rank: int,
        mamba_conv_bias: bool,
        intermediate_size: int,
        rms_norm_eps: float,
    ) -> None:
        super().__init__()
        RMSNorm = component("rms_norm")
        MambaMixer = component("mamba_mixer")
        LlamaMLP = component("llama_mlp")
        self.input_layernorm = RMSNorm(hidden_size, eps=rms_norm_eps)
        self.mamba = MambaMixer(hidden_size, mamba_intermediate_size, mamba_d_state, mamba_d_conv, mamba_dt_rank,
                                mamba_conv_bias, use_rms_norm=True, rms_norm_eps=rms_norm_eps)
        self.pre_ff_layernorm = RMSNorm(hidden_size, eps=rms_norm_eps)
        self.feed_forward = LlamaMLP(hidden_size, intermediate_size)

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor | None = None):
        if residual is None:
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
        else:
            hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.mamba(hidden_states)
        hidden_states, residual = self.pre_ff_layernorm(hidden_states, residual)
        return self.feed_forward(hidden_states), residual

"""One Mamba-1 layer (vLLM MambaDecoderLayer) built from lower tasks: RMSNorm (L1) and the Mamba mixer (L2, itself
built from linear, causal_conv1d and selective_scan). Every class comes from component(...), so this one file is
the eager module (in float64, the oracle) and the production one.

mixer_rms_eps is FalconMambaConfig's: given (Falcon-Mamba), the mixer RMS-normalises dt, B and C without weights, as
vLLM's layer passes use_rms_norm=True, rms_norm_has_weight=False for model_type falcon_mamba; None (Mamba) leaves
them out.

forward follows vLLM: without residual, residual = hidden_states and the norm is plain; with one, the norm adds it
first (fused add + norm) and returns the sum as the new residual. Returns (mixer output, residual), the pair the
next layer takes.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class MambaDecoderLayer(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int,
        state_size: int,
        conv_kernel: int,
        time_step_rank: int,
        use_conv_bias: bool,
        layer_norm_epsilon: float,
        mixer_rms_eps: float | None = None,
    ) -> None:
        super().__init__()
        RMSNorm = component("rms_norm")
        MambaMixer = component("mamba_mixer")
        self.norm = RMSNorm(hidden_size, eps=layer_norm_epsilon)
        falcon = mixer_rms_eps is not None
        self.mixer = MambaMixer(hidden_size, intermediate_size, state_size, conv_kernel, time_step_rank, use_conv_bias,
                                use_rms_norm=falcon, rms_norm_has_weight=not falcon,
                                **({"rms_norm_eps": mixer_rms_eps} if falcon else {}))

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor | None = None):
        if residual is None:
            residual = hidden_states
            hidden_states = self.norm(hidden_states)
        else:
            hidden_states, residual = self.norm(hidden_states, residual)
        return self.mixer(hidden_states), residual

"""Mamba2's mixer (transformers Mamba2Mixer / mamba_ssm Mamba2, unfused path) built from the L1 tasks:
in_proj -> z | xBC | dt -> causal_conv1d + SiLU over xBC -> x | B | C -> mamba2_ssd (A = -exp(A_log), D, dt_bias,
softplus, no z) -> gated RMSNorm: rms_norm(y * silu(z)) -> out_proj.

The gate multiplies before the norm (mamba_ssm RMSNormGated with norm_before_gate=False), computed in at least fp32
and rounded once, then the rms_norm task normalises over the whole inner dimension: with one group (every case
here) that is exactly Mamba2's norm. Every class comes from component(...), so this one file is the eager module
(in float64, the oracle) and the production one.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class Mamba2Mixer(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        head_dim: int,
        state_size: int,
        conv_kernel: int,
        chunk_size: int,
        layer_norm_epsilon: float = 1e-5,
    ) -> None:
        super().__init__()
        Linear = component("linear")
        CausalConv1d = component("causal_conv1d")
        MambaChunkScan = component("mamba2_ssd")
        RMSNorm = component("rms_norm")
        self.num_heads, self.head_dim, self.state_size = num_heads, head_dim, state_size
        self.intermediate_size = num_heads * head_dim
        conv_dim = self.intermediate_size + 2 * state_size
        self.in_proj = Linear(hidden_size, self.intermediate_size + conv_dim + num_heads, bias=False)
        self.conv1d = CausalConv1d(conv_dim, conv_kernel, bias=True, activation="silu")
        self.ssd = MambaChunkScan(chunk_size=chunk_size, dt_softplus=True)
        self.norm = RMSNorm(self.intermediate_size, eps=layer_norm_epsilon)
        self.out_proj = Linear(self.intermediate_size, hidden_size, bias=False)
        # Mamba2's init: A uniform in [1, 16], dt = softplus(dt_bias) log-uniform in [1e-3, 1e-1], D = 1.
        self.A_log = nn.Parameter(torch.log(torch.empty(num_heads).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(num_heads))
        dt = torch.exp(torch.rand(num_heads) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seqlen, _ = hidden_states.shape
        compute = torch.promote_types(self.A_log.dtype, torch.float32)
        inner, state = self.intermediate_size, self.state_size
        z, xBC, dt = self.in_proj(hidden_states).split([inner, inner + 2 * state, self.num_heads], dim=-1)
        xBC = self.conv1d(xBC.transpose(1, 2)).transpose(1, 2)
        x, B, C = xBC.split([inner, state, state], dim=-1)
        y, _ = self.ssd(
            x.reshape(batch, seqlen, self.num_heads, self.head_dim), dt, -torch.exp(self.A_log.to(compute)),
            B.reshape(batch, seqlen, 1, state), C.reshape(batch, seqlen, 1, state), self.D.to(compute), None,
            self.dt_bias.to(compute),
        )
        gated = y.reshape(batch, seqlen, inner).to(compute) * F.silu(z.to(compute))
        return self.out_proj(self.norm(gated.to(hidden_states.dtype)))

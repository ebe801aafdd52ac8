"""Mamba-1's mixer (transformers MambaMixer, its CUDA-kernel path) built from the L1 tasks:
in_proj -> split x | gate -> causal_conv1d (SiLU) -> x_proj -> split dt | B | C -> dt_proj -> selective_scan with
A = -exp(A_log), D, gate z and the dt bias passed to the scan in fp32 -> out_proj.

With use_rms_norm (Jamba's JambaMambaMixer; vLLM's MambaMixer flag of the same name) dt, B and C are each
RMS-normalised (rms_norm task) before dt_proj and the scan: with weights (Jamba), or without where
rms_norm_has_weight is false (Falcon-Mamba's FalconMambaMixer; vLLM's flag of that name), their weights then fixed at
ones so the rms_norm component computes the plain normalisation. As mamba_ssm's fast path, dt_proj's weight
runs as a plain projection and its bias goes to the scan as delta_bias (here the parameter dt_bias; transformers
calls it dt_proj.bias). A_log, D and dt_bias enter the scan in at least fp32. Every class comes from component(...),
so this one file is the eager module (in float64, the oracle) and the production one.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fastkernels.composition import component


class MambaMixer(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int,
        state_size: int,
        conv_kernel: int,
        time_step_rank: int,
        use_conv_bias: bool = True,
        use_rms_norm: bool = False,
        rms_norm_has_weight: bool = True,
        rms_norm_eps: float = 1e-6,
    ) -> None:
        super().__init__()
        Linear = component("linear")
        CausalConv1d = component("causal_conv1d")
        SelectiveScan = component("selective_scan")
        self.intermediate_size = intermediate_size
        self.state_size = state_size
        self.time_step_rank = time_step_rank
        self.in_proj = Linear(hidden_size, 2 * intermediate_size, bias=False)
        self.conv1d = CausalConv1d(intermediate_size, conv_kernel, bias=use_conv_bias, activation="silu")
        self.x_proj = Linear(intermediate_size, time_step_rank + 2 * state_size, bias=False)
        self.dt_proj = Linear(time_step_rank, intermediate_size, bias=False)
        self.out_proj = Linear(intermediate_size, hidden_size, bias=False)
        self.selective_scan = SelectiveScan(delta_softplus=True)
        self.use_rms_norm = use_rms_norm
        if use_rms_norm:
            RMSNorm = component("rms_norm")
            self.dt_layernorm = RMSNorm(time_step_rank, eps=rms_norm_eps)
            self.b_layernorm = RMSNorm(state_size, eps=rms_norm_eps)
            self.c_layernorm = RMSNorm(state_size, eps=rms_norm_eps)
            # Jamba starts these weights at ones; drawn around one here (the manifest's parameters: cannot name
            # weights only some cases have) so that a kernel ignoring them fails. Falcon-Mamba's have none: ones.
            with torch.no_grad():
                for norm in (self.dt_layernorm, self.b_layernorm, self.c_layernorm):
                    norm.weight.normal_(1.0, 0.1) if rms_norm_has_weight else norm.weight.fill_(1.0)
        # Mamba's init: A = -(1..state_size) per channel; dt = softplus(dt_bias) log-uniform in [1e-3, 1e-1].
        A = torch.arange(1, state_size + 1, dtype=torch.float32).expand(intermediate_size, -1)
        self.A_log = nn.Parameter(torch.log(A).contiguous())
        self.D = nn.Parameter(torch.ones(intermediate_size))
        dt = torch.exp(torch.rand(intermediate_size) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(self.A_log.dtype, torch.float32)
        projected = self.in_proj(hidden_states).transpose(1, 2)              # [batch, 2 * inner, seqlen]
        x, gate = projected.chunk(2, dim=1)
        x = self.conv1d(x)
        params = self.x_proj(x.transpose(1, 2))                               # [batch, seqlen, rank + 2 * state]
        time_step, B, C = params.split([self.time_step_rank, self.state_size, self.state_size], dim=-1)
        if self.use_rms_norm:
            time_step = self.dt_layernorm(time_step.contiguous())
            B, C = self.b_layernorm(B.contiguous()), self.c_layernorm(C.contiguous())
        dt = self.dt_proj(time_step).transpose(1, 2)                          # [batch, inner, seqlen]
        A = -torch.exp(self.A_log.to(compute))
        y, _ = self.selective_scan(x, dt, A, B.transpose(1, 2), C.transpose(1, 2), self.D.to(compute), gate,
                                   self.dt_bias.to(compute))
        return self.out_proj(y.transpose(1, 2))

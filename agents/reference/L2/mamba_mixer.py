"""Mamba-1's mixer with its two sequence kernels in Triton: the L1 reference candidates' causal conv1d (reads the
strided half of in_proj's output in place, bias and SiLU fused) and selective scan (the recurrence in registers,
D skip and z gate fused, no state history in memory). The projections stay the mixer's own Linear modules (cuBLAS).

Subclasses the task's eager module, so constructor, submodules and state dict are the task's own; only forward
changes. Kernels and modules are loaded by path with importlib: a candidate may not import the harness.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]


def _load(relative: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load("tasks/L2/mamba_mixer/mamba_mixer.py", "_reference_mamba_mixer_eager")
_conv = _load("agents/reference/L1/causal_conv1d.py", "_reference_mamba_mixer_conv")
_scan = _load("agents/reference/L1/selective_scan.py", "_reference_mamba_mixer_scan")


class MambaMixer(_eager.MambaMixer):
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(self.A_log.dtype, torch.float32)
        x, gate = self.in_proj(hidden_states).transpose(1, 2).chunk(2, dim=1)   # strided views, no copy
        x = _conv.causal_conv1d(x, self.conv1d.weight, self.conv1d.bias, silu=True)
        params = self.x_proj(x.transpose(1, 2))
        time_step, B, C = params.split([self.time_step_rank, self.state_size, self.state_size], dim=-1)
        if self.use_rms_norm:
            time_step = self.dt_layernorm(time_step.contiguous())
            B, C = self.b_layernorm(B.contiguous()), self.c_layernorm(C.contiguous())
        dt = self.dt_proj(time_step).transpose(1, 2)
        y, _ = _scan.selective_scan(x, dt, -torch.exp(self.A_log.to(compute)), B.transpose(1, 2), C.transpose(1, 2),
                                    self.D.to(compute), gate, self.dt_bias.to(compute), delta_softplus=True)
        return self.out_proj(y.transpose(1, 2))

"""Mamba2's SSD scan (mamba_ssm mamba_chunk_scan_combined) as the plain recurrence. Also the float64 oracle.

Per head h (group g = h // (nheads / ngroups)): dt = softplus(dt + dt_bias), state [headdim, dstate]
S_t = exp(dt_t A[h]) S_{t-1} + dt_t x_t B_t[g]^T from S_0 = 0, y_t = S_t C_t[g] + D[h] x_t, times silu(z_t) when z
is given. One time step at a time in fp32 (float64 for the oracle), vectorised over batch and heads; y is rounded
once to x's dtype, the final state stays in the compute dtype. The chunked algorithm's chunk_size changes only how
it is computed, not the result.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MambaChunkScan(nn.Module):
    def __init__(self, chunk_size: int = 256, dt_softplus: bool = True) -> None:
        super().__init__()
        self.chunk_size = chunk_size
        self.dt_softplus = dt_softplus

    def forward(
        self,
        x: torch.Tensor,                     # [batch, seqlen, nheads, headdim]
        dt: torch.Tensor,                    # [batch, seqlen, nheads]
        A: torch.Tensor,                     # [nheads]
        B: torch.Tensor,                     # [batch, seqlen, ngroups, dstate]
        C: torch.Tensor,                     # [batch, seqlen, ngroups, dstate]
        D: torch.Tensor | None = None,       # [nheads]
        z: torch.Tensor | None = None,       # [batch, seqlen, nheads, headdim]
        dt_bias: torch.Tensor | None = None,  # [nheads]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(x.dtype, torch.float32)
        batch, seqlen, nheads, headdim = x.shape
        group = nheads // B.shape[2]
        x32 = x.to(compute)
        step = dt.to(compute) + (dt_bias.to(compute) if dt_bias is not None else 0.0)
        step = F.softplus(step) if self.dt_softplus else step
        decay = torch.exp(step * A.to(compute))                    # [batch, seqlen, nheads]
        Bh = B.to(compute).repeat_interleave(group, dim=2)         # [batch, seqlen, nheads, dstate]
        Ch = C.to(compute).repeat_interleave(group, dim=2)
        state = torch.zeros(batch, nheads, headdim, B.shape[-1], dtype=compute, device=x.device)
        y = torch.empty(x.shape, dtype=compute, device=x.device)
        for t in range(seqlen):
            inject = (step[:, t, :, None] * x32[:, t])[..., None] * Bh[:, t, :, None, :]
            state = decay[:, t, :, None, None] * state + inject
            y[:, t] = (state * Ch[:, t, :, None, :]).sum(-1)
        if D is not None:
            y = y + x32 * D.to(compute)[:, None]
        if z is not None:
            y = y * F.silu(z.to(compute))
        return y.to(x.dtype), state

"""Mamba-1's selective scan (mamba_ssm selective_scan_fn) as the plain recurrence. Also the float64 oracle.

Per channel d and state n: delta = softplus(delta + delta_bias), h_t = exp(delta_t A[d, n]) h_{t-1}
+ delta_t B_t[n] u_t, y_t = sum_n C_t[n] h_t + D[d] u_t, times silu(z_t). One time step at a time in fp32 (float64
for the oracle), vectorised over batch, channels and states; y is rounded once to u's dtype, the last state stays in
the compute dtype (mamba_ssm returns it in fp32).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SelectiveScan(nn.Module):
    def __init__(self, delta_softplus: bool = True) -> None:
        super().__init__()
        self.delta_softplus = delta_softplus

    def forward(
        self,
        u: torch.Tensor,                       # [batch, dim, seqlen]
        delta: torch.Tensor,                   # [batch, dim, seqlen]
        A: torch.Tensor,                       # [dim, dstate]
        B: torch.Tensor,                       # [batch, dstate, seqlen]
        C: torch.Tensor,                       # [batch, dstate, seqlen]
        D: torch.Tensor | None = None,         # [dim]
        z: torch.Tensor | None = None,         # [batch, dim, seqlen]
        delta_bias: torch.Tensor | None = None,  # [dim]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(u.dtype, torch.float32)
        u32, dt = u.to(compute), self.time_steps(delta, delta_bias, compute)
        A32, B32, C32 = A.to(compute), B.to(compute), C.to(compute)
        batch, dim, seqlen = u.shape
        h = torch.zeros(batch, dim, A.shape[1], dtype=compute, device=u.device)
        y = torch.empty(batch, dim, seqlen, dtype=compute, device=u.device)
        for t in range(seqlen):
            h = torch.exp(dt[:, :, t, None] * A32) * h + (dt[:, :, t] * u32[:, :, t])[..., None] * B32[:, None, :, t]
            y[:, :, t] = (h * C32[:, None, :, t]).sum(-1)
        return self.skip_and_gate(y, u, D, z).to(u.dtype), h

    def time_steps(self, delta: torch.Tensor, delta_bias: torch.Tensor | None, compute: torch.dtype) -> torch.Tensor:
        """dt = softplus(delta + delta_bias) in `compute`: the discretisation step every implementation starts from."""
        dt = delta.to(compute)
        if delta_bias is not None:
            dt = dt + delta_bias.to(compute)[:, None]
        return F.softplus(dt) if self.delta_softplus else dt

    @staticmethod
    def skip_and_gate(y: torch.Tensor, u: torch.Tensor, D: torch.Tensor | None, z: torch.Tensor | None) -> torch.Tensor:
        """y + D u, times silu(z), in y's dtype: what every implementation does after the scan."""
        if D is not None:
            y = y + u.to(y.dtype) * D.to(y.dtype)[:, None]
        if z is not None:
            y = y * F.silu(z.to(y.dtype))
        return y

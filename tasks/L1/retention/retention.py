"""RetNet's multi-scale retention (FLA chunk_retention) as the plain recurrence. Also the float64 oracle.

Head h of H decays at gamma_h = 1 - 2^(-5 - h) (RetNet's fixed multi-scale decays): a [K, V] state
S_t = gamma_h S_{t-1} + k_t^T v_t from initial_state (fp32) or zeros, o_t = K^-0.5 q_t S_t. One time step at a time
in fp32 (float64 for the oracle), vectorised over batch and heads; o is rounded once to q's dtype, the final state
stays in the compute dtype (FLA: fp32).
"""

from __future__ import annotations

import torch
from torch import nn


def retention_decay(heads: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """gamma_h = 1 - 2^(-5 - h), computed in the given dtype (fp32 at least)."""
    return 1 - torch.pow(2.0, -5.0 - torch.arange(heads, dtype=dtype, device=device))


class ChunkRetention(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(
        self,
        q: torch.Tensor,                             # [batch, seqlen, heads, K]
        k: torch.Tensor,                             # [batch, seqlen, heads, K]
        v: torch.Tensor,                             # [batch, seqlen, heads, V]
        initial_state: torch.Tensor | None = None,   # [batch, heads, K, V], fp32
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(q.dtype, torch.float32)
        batch, seqlen, heads, dk = q.shape
        gamma = retention_decay(heads, compute, q.device)[:, None, None]
        q32, k32, v32 = q.to(compute) * dk ** -0.5, k.to(compute), v.to(compute)
        if initial_state is None:
            state = torch.zeros(batch, heads, dk, v.shape[-1], dtype=compute, device=q.device)
        else:
            state = initial_state.to(compute)
        o = torch.empty(v.shape, dtype=compute, device=q.device)
        for t in range(seqlen):
            state = gamma * state + k32[:, t, :, :, None] * v32[:, t, :, None, :]
            o[:, t] = torch.einsum("bhk,bhkv->bhv", q32[:, t], state)
        return o.to(q.dtype), state

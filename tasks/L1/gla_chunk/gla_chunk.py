"""Gated linear attention (FLA chunk_gla) as the plain recurrence. Also the float64 oracle.

Per head, a [K, V] state S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t (from initial_state, or zeros) and
o_t = scale * q_t S_t with scale = K^-0.5. One time step at a time in fp32 (float64 for the oracle), vectorised
over batch and heads; o is rounded once to q's dtype, the final state stays in the compute dtype (FLA: fp32).
"""

from __future__ import annotations

import torch
from torch import nn


class ChunkGLA(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(
        self,
        q: torch.Tensor,                             # [batch, seqlen, heads, K]
        k: torch.Tensor,                             # [batch, seqlen, heads, K]
        v: torch.Tensor,                             # [batch, seqlen, heads, V]
        g: torch.Tensor,                             # [batch, seqlen, heads, K], log forget gates (<= 0)
        initial_state: torch.Tensor | None = None,   # [batch, heads, K, V], fp32
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(q.dtype, torch.float32)
        batch, seqlen, heads, dk = q.shape
        scale = dk ** -0.5
        q32, k32, v32, decay = q.to(compute), k.to(compute), v.to(compute), torch.exp(g.to(compute))
        if initial_state is None:
            state = torch.zeros(batch, heads, dk, v.shape[-1], dtype=compute, device=q.device)
        else:
            state = initial_state.to(compute)
        o = torch.empty(v.shape, dtype=compute, device=q.device)
        for t in range(seqlen):
            state = decay[:, t, :, :, None] * state + k32[:, t, :, :, None] * v32[:, t, :, None, :]
            o[:, t] = torch.einsum("bhk,bhkv->bhv", q32[:, t] * scale, state)
        return o.to(q.dtype), state

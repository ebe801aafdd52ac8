"""RWKV-7's WKV state update (FLA chunk_rwkv7 as RWKV7Attention calls it) as the plain recurrence. Also the float64
oracle.

Per head, a [K, V] state (FLA's layout; RWKV-LM keeps its transpose) and the diagonal-plus-low-rank transition the
layer builds with a = -kk, b = kk * a_gate:
S_t = diag(exp(w_t)) S_{t-1} + b_t (a_t S_{t-1}) + k_t^T v_t, o_t = r_t S_t (scale 1), from initial_state or zeros.
One time step at a time in fp32 (float64 for the oracle), vectorised over batch and heads; o is rounded once to r's
dtype, the final state stays in the compute dtype (FLA: fp32).
"""

from __future__ import annotations

import torch
from torch import nn


class RWKV7WKV(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(
        self,
        r: torch.Tensor,                             # [batch, seqlen, heads, K], receptance (query)
        w: torch.Tensor,                             # [batch, seqlen, heads, K], log decay (<= 0)
        k: torch.Tensor,                             # [batch, seqlen, heads, K]
        v: torch.Tensor,                             # [batch, seqlen, heads, V]
        kk: torch.Tensor,                            # [batch, seqlen, heads, K], the removal key (about unit norm)
        a: torch.Tensor,                             # [batch, seqlen, heads, K], in-context learning rate in (0, 1)
        initial_state: torch.Tensor | None = None,   # [batch, heads, K, V], fp32
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(r.dtype, torch.float32)
        batch, seqlen, heads, dk = r.shape
        r32, k32, v32, decay = r.to(compute), k.to(compute), v.to(compute), torch.exp(w.to(compute))
        alpha = -kk.to(compute)
        beta = kk.to(compute) * a.to(compute)
        if initial_state is None:
            state = torch.zeros(batch, heads, dk, v.shape[-1], dtype=compute, device=r.device)
        else:
            state = initial_state.to(compute)
        o = torch.empty(v.shape, dtype=compute, device=r.device)
        for t in range(seqlen):
            removed = torch.einsum("bhk,bhkv->bhv", alpha[:, t], state)
            state = (decay[:, t, :, :, None] * state + beta[:, t, :, :, None] * removed[:, :, None, :]
                     + k32[:, t, :, :, None] * v32[:, t, :, None, :])
            o[:, t] = torch.einsum("bhk,bhkv->bhv", r32[:, t], state)
        return o.to(r.dtype), state

"""The gated delta rule (FLA chunk_gated_delta_rule, use_qk_l2norm_in_kernel=True) as the plain recurrence, as
Qwen3-Next's linear attention runs it. Also the float64 oracle.

q and k are L2-normalised (x / sqrt(sum x^2 + 1e-6)) and their heads repeated to the value heads (each q/k head
serves num_v_heads / num_k_heads value heads, as Qwen3NextGatedDeltaNet repeats them). Per value head, a [K, V]
state: S <- exp(g_t) S; S <- S + beta_t k_t^T (v_t - k_t S); o_t = K^-0.5 q_t S. One time step at a time in fp32
(float64 for the oracle), vectorised over batch and heads; o is rounded once, the final state stays in the compute
dtype (FLA: fp32).
"""

from __future__ import annotations

import torch
from torch import nn


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


class ChunkGatedDeltaRule(nn.Module):
    def __init__(self, use_qk_l2norm: bool = True) -> None:
        super().__init__()
        self.use_qk_l2norm = use_qk_l2norm

    def forward(
        self,
        q: torch.Tensor,                             # [batch, seqlen, num_k_heads, K]
        k: torch.Tensor,                             # [batch, seqlen, num_k_heads, K]
        v: torch.Tensor,                             # [batch, seqlen, num_v_heads, V]
        g: torch.Tensor,                             # [batch, seqlen, num_v_heads], log decay (<= 0)
        beta: torch.Tensor,                          # [batch, seqlen, num_v_heads], in (0, 1)
        initial_state: torch.Tensor | None = None,   # [batch, num_v_heads, K, V], fp32
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(q.dtype, torch.float32)
        batch, seqlen, heads, dv = v.shape
        dk = q.shape[-1]
        group = heads // q.shape[2]
        q32, k32 = q.to(compute), k.to(compute)
        if self.use_qk_l2norm:
            q32, k32 = l2norm(q32), l2norm(k32)
        q32 = q32.repeat_interleave(group, dim=2) * dk ** -0.5
        k32 = k32.repeat_interleave(group, dim=2)
        v32, decay, b32 = v.to(compute), torch.exp(g.to(compute)), beta.to(compute)
        if initial_state is None:
            state = torch.zeros(batch, heads, dk, dv, dtype=compute, device=q.device)
        else:
            state = initial_state.to(compute)
        o = torch.empty(v.shape, dtype=compute, device=q.device)
        for t in range(seqlen):
            kt = k32[:, t]
            state = decay[:, t, :, None, None] * state
            delta = (v32[:, t] - torch.einsum("bhk,bhkv->bhv", kt, state)) * b32[:, t, :, None]
            state = state + kt[..., None] * delta[:, :, None, :]
            o[:, t] = torch.einsum("bhk,bhkv->bhv", q32[:, t], state)
        return o.to(q.dtype), state

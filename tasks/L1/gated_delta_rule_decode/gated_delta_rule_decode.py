"""One decode step of the gated delta rule (FLA fused_recurrent_gated_delta_rule with use_qk_l2norm_in_kernel=True,
one token per sequence), as Qwen3-Next's linear attention runs it while generating. Also the float64 oracle.

q and k are L2-normalised (x / sqrt(sum x^2 + 1e-6)) and their heads repeated to the value heads. Per value head,
from the cached [K, V] state: S <- exp(g) S; S <- S + beta k^T (v - k S); o = K^-0.5 q S. Written as the general
recurrence over the (length-1) token axis in fp32 (float64 for the oracle); o is rounded once to q's dtype, the new
state stays in the compute dtype (FLA: fp32).
"""

from __future__ import annotations

import torch
from torch import nn


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


class FusedRecurrentGatedDeltaRule(nn.Module):
    def __init__(self, use_qk_l2norm: bool = True) -> None:
        super().__init__()
        self.use_qk_l2norm = use_qk_l2norm

    def forward(
        self,
        q: torch.Tensor,              # [batch, 1, num_k_heads, K]
        k: torch.Tensor,              # [batch, 1, num_k_heads, K]
        v: torch.Tensor,              # [batch, 1, num_v_heads, V]
        g: torch.Tensor,              # [batch, 1, num_v_heads], log decay (<= 0)
        beta: torch.Tensor,           # [batch, 1, num_v_heads]
        initial_state: torch.Tensor,  # [batch, num_v_heads, K, V], fp32: the cached state
    ) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(q.dtype, torch.float32)
        heads, dk = v.shape[2], q.shape[-1]
        group = heads // q.shape[2]
        q32, k32 = q.to(compute), k.to(compute)
        if self.use_qk_l2norm:
            q32, k32 = l2norm(q32), l2norm(k32)
        q32 = q32.repeat_interleave(group, dim=2) * dk ** -0.5
        k32 = k32.repeat_interleave(group, dim=2)
        v32, decay, b32 = v.to(compute), torch.exp(g.to(compute)), beta.to(compute)
        state = initial_state.to(compute)
        o = torch.empty(v.shape, dtype=compute, device=q.device)
        for t in range(v.shape[1]):
            kt = k32[:, t]
            state = decay[:, t, :, None, None] * state
            delta = (v32[:, t] - torch.einsum("bhk,bhkv->bhv", kt, state)) * b32[:, t, :, None]
            state = state + kt[..., None] * delta[:, :, None, :]
            o[:, t] = torch.einsum("bhk,bhkv->bhv", q32[:, t], state)
        return o.to(q.dtype), state

"""Qwen3-Next's linear-attention block (transformers Qwen3NextGatedDeltaNet) for a prefill, built from the L1 tasks:
in_proj_qkvz and in_proj_ba -> per-key-head split into q, k, v, z, b, a -> causal_conv1d + SiLU over [q | k | v]
-> g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b) -> gated_delta_rule (L2-normalised q and k) ->
RMSNorm over each value head, times silu(z) -> out_proj.

Every class comes from component(...), so this one file is the eager module (in float64, the oracle) and the
production one. The gated norm is rms_norm's output times silu(z), computed in at least fp32 and rounded once, as
Qwen3NextRMSNormGated does after its own rounding of the normed value.

initial_state is the fp32 recurrent state cached for the sequence's earlier chunks (a chunked prefill's next
chunk); only the output is returned.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class Qwen3NextGatedDeltaNet(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        num_k_heads: int,
        num_v_heads: int,
        head_k_dim: int,
        head_v_dim: int,
        conv_kernel: int,
        rms_norm_eps: float = 1e-6,
    ) -> None:
        super().__init__()
        Linear = component("linear")
        CausalConv1d = component("causal_conv1d")
        GatedDeltaRule = component("gated_delta_rule")
        RMSNorm = component("rms_norm")
        self.num_k_heads, self.num_v_heads = num_k_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim, self.value_dim = num_k_heads * head_k_dim, num_v_heads * head_v_dim
        self.in_proj_qkvz = Linear(hidden_size, 2 * self.key_dim + 2 * self.value_dim, bias=False)
        self.in_proj_ba = Linear(hidden_size, 2 * num_v_heads, bias=False)
        self.conv1d = CausalConv1d(2 * self.key_dim + self.value_dim, conv_kernel, bias=False, activation="silu")
        self.gated_delta_rule = GatedDeltaRule(use_qk_l2norm=True)
        self.norm = RMSNorm(head_v_dim, eps=rms_norm_eps)
        self.out_proj = Linear(self.value_dim, hidden_size, bias=False)
        # Qwen3-Next's init: A uniform in (0, 16), dt_bias ones.
        self.A_log = nn.Parameter(torch.log(torch.empty(num_v_heads).uniform_(0, 16)))
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))

    def split_heads(self, qkvz: torch.Tensor, ba: torch.Tensor):
        """Qwen3NextGatedDeltaNet.fix_query_key_value_ordering: the projections are grouped per key head."""
        batch, seqlen, _ = qkvz.shape
        per = self.num_v_heads // self.num_k_heads
        qkvz = qkvz.view(batch, seqlen, self.num_k_heads, 2 * self.head_k_dim + 2 * per * self.head_v_dim)
        ba = ba.view(batch, seqlen, self.num_k_heads, 2 * per)
        q, k, v, z = qkvz.split([self.head_k_dim, self.head_k_dim, per * self.head_v_dim, per * self.head_v_dim], dim=3)
        b, a = ba.split([per, per], dim=3)
        v = v.reshape(batch, seqlen, self.num_v_heads, self.head_v_dim)
        z = z.reshape(batch, seqlen, self.num_v_heads, self.head_v_dim)
        return q, k, v, z, b.reshape(batch, seqlen, self.num_v_heads), a.reshape(batch, seqlen, self.num_v_heads)

    def forward(self, hidden_states: torch.Tensor, initial_state: torch.Tensor | None = None) -> torch.Tensor:
        batch, seqlen, _ = hidden_states.shape
        compute = torch.promote_types(self.A_log.dtype, torch.float32)
        q, k, v, z, b, a = self.split_heads(self.in_proj_qkvz(hidden_states), self.in_proj_ba(hidden_states))
        mixed = torch.cat([q.reshape(batch, seqlen, -1), k.reshape(batch, seqlen, -1), v.reshape(batch, seqlen, -1)],
                          dim=-1)
        mixed = self.conv1d(mixed.transpose(1, 2)).transpose(1, 2)
        q, k, v = mixed.split([self.key_dim, self.key_dim, self.value_dim], dim=-1)
        q = q.reshape(batch, seqlen, self.num_k_heads, self.head_k_dim)
        k = k.reshape(batch, seqlen, self.num_k_heads, self.head_k_dim)
        v = v.reshape(batch, seqlen, self.num_v_heads, self.head_v_dim)
        beta = b.sigmoid()
        g = -self.A_log.to(compute).exp() * F.softplus(a.to(compute) + self.dt_bias.to(compute))
        o, _ = self.gated_delta_rule(q, k, v, g, beta, initial_state)
        gated = self.norm(o).to(compute) * F.silu(z.to(compute))
        return self.out_proj(gated.to(hidden_states.dtype).reshape(batch, seqlen, self.value_dim))

"""FLA's GatedLinearAttention layer (chunk mode, output gate, fused norm + swish gate) built from the L1 tasks:
q/k/v projections, the low-rank gate projection gk_proj (hidden -> 16 -> key_dim, with bias),
g = logsigmoid(gk) / gate_logit_normalizer -> gla_chunk -> per-head RMSNorm times swish(g_proj(x)) -> o_proj.

The swish gate multiplies rms_norm's output in at least fp32 and is rounded once (FLA's FusedRMSNormGated rounds
once too). Every class comes from component(...), so this one file is the eager module (in float64, the oracle) and
the production one.

initial_state is the fp32 recurrent state cached for the sequence's earlier chunks (a chunked prefill's next
chunk); only the output is returned.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class GatedLinearAttention(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        expand_k: float = 0.5,
        expand_v: float = 1.0,
        gate_low_rank_dim: int = 16,
        gate_logit_normalizer: int = 16,
        norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        Linear = component("linear")
        ChunkGLA = component("gla_chunk")
        RMSNorm = component("rms_norm")
        self.num_heads = num_heads
        self.key_dim, self.value_dim = int(hidden_size * expand_k), int(hidden_size * expand_v)
        self.head_k_dim, self.head_v_dim = self.key_dim // num_heads, self.value_dim // num_heads
        self.gate_logit_normalizer = gate_logit_normalizer
        self.q_proj = Linear(hidden_size, self.key_dim, bias=False)
        self.k_proj = Linear(hidden_size, self.key_dim, bias=False)
        self.v_proj = Linear(hidden_size, self.value_dim, bias=False)
        self.g_proj = Linear(hidden_size, self.value_dim, bias=False)
        self.gk_proj = nn.Sequential(Linear(hidden_size, gate_low_rank_dim, bias=False),
                                     Linear(gate_low_rank_dim, self.key_dim, bias=True))
        self.gla = ChunkGLA()
        self.g_norm_swish_gate = RMSNorm(self.head_v_dim, eps=norm_eps)
        self.o_proj = Linear(self.value_dim, hidden_size, bias=False)

    def forward(self, hidden_states: torch.Tensor, initial_state: torch.Tensor | None = None) -> torch.Tensor:
        batch, seqlen, _ = hidden_states.shape
        heads, dk, dv = self.num_heads, self.head_k_dim, self.head_v_dim
        compute = torch.promote_types(hidden_states.dtype, torch.float32)
        q = self.q_proj(hidden_states).reshape(batch, seqlen, heads, dk)
        k = self.k_proj(hidden_states).reshape(batch, seqlen, heads, dk)
        v = self.v_proj(hidden_states).reshape(batch, seqlen, heads, dv)
        gk = F.logsigmoid(self.gk_proj(hidden_states).to(compute)) / self.gate_logit_normalizer
        o, _ = self.gla(q, k, v, gk.to(hidden_states.dtype).reshape(batch, seqlen, heads, dk), initial_state)
        g = self.g_proj(hidden_states).reshape(batch, seqlen, heads, dv)
        gated = self.g_norm_swish_gate(o).to(compute) * F.silu(g.to(compute))
        return self.o_proj(gated.to(hidden_states.dtype).reshape(batch, seqlen, self.value_dim))

"""FLA's MultiScaleRetention layer (RetNet; chunk mode, output gate, fused norm + swish gate) for a prefill, built
from the L1 tasks: q/k/v/g projections -> neox rotary embedding of q and k (positions 0..seqlen-1, base 10000) ->
retention with RetNet's fixed per-head decays -> per-head RMSNorm times swish(g) -> o_proj.

The rotary task works on the flat [tokens, heads * head_dim] layout, the retention task on
[batch, seqlen, heads, head_dim]; the reshapes between them are views. The swish gate multiplies rms_norm's output
in at least fp32 and is rounded once. Every class comes from component(...), so this one file is the eager module
(in float64, the oracle) and the production one.

initial_state is the fp32 recurrent state cached for the sequence's earlier chunks (a chunked prefill's next
chunk); only the output is returned.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class MultiScaleRetention(nn.Module):
    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        expand_k: float = 1.0,
        expand_v: float = 2.0,
        norm_eps: float = 1e-5,
        max_position_embeddings: int = 8192,
    ) -> None:
        super().__init__()
        Linear = component("linear")
        RotaryEmbedding = component("rotary_embedding")
        ChunkRetention = component("retention")
        RMSNorm = component("rms_norm")
        self.num_heads = num_heads
        self.key_dim, self.value_dim = int(hidden_size * expand_k), int(hidden_size * expand_v)
        self.head_k_dim, self.head_v_dim = self.key_dim // num_heads, self.value_dim // num_heads
        self.q_proj = Linear(hidden_size, self.key_dim, bias=False)
        self.k_proj = Linear(hidden_size, self.key_dim, bias=False)
        self.v_proj = Linear(hidden_size, self.value_dim, bias=False)
        self.g_proj = Linear(hidden_size, self.value_dim, bias=False)
        self.rotary = RotaryEmbedding(self.head_k_dim, self.head_k_dim, max_position_embeddings, 10000.0, True)
        self.retention = ChunkRetention()
        self.g_norm_swish_gate = RMSNorm(self.head_v_dim, eps=norm_eps)
        self.o_proj = Linear(self.value_dim, hidden_size, bias=False)

    def forward(self, hidden_states: torch.Tensor, initial_state: torch.Tensor | None = None) -> torch.Tensor:
        batch, seqlen, _ = hidden_states.shape
        heads, dk, dv = self.num_heads, self.head_k_dim, self.head_v_dim
        compute = torch.promote_types(hidden_states.dtype, torch.float32)
        positions = torch.arange(seqlen, device=hidden_states.device).repeat(batch)  # offsets are not modelled
        q = self.q_proj(hidden_states).reshape(batch * seqlen, self.key_dim)
        k = self.k_proj(hidden_states).reshape(batch * seqlen, self.key_dim)
        q, k = self.rotary(positions, q, k)
        v = self.v_proj(hidden_states).reshape(batch, seqlen, heads, dv)
        o, _ = self.retention(q.reshape(batch, seqlen, heads, dk), k.reshape(batch, seqlen, heads, dk), v,
                              initial_state)
        g = self.g_proj(hidden_states).reshape(batch, seqlen, heads, dv)
        gated = self.g_norm_swish_gate(o).to(compute) * F.silu(g.to(compute))
        return self.o_proj(gated.to(hidden_states.dtype).reshape(batch, seqlen, self.value_dim))

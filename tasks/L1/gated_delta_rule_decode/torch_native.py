"""The decode step as transformers' Qwen3-Next torch path computes it (torch_recurrent_gated_delta_rule for one
token): elementwise products and reductions over the [K, V] state, fp32, the token axis squeezed away."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gated_delta_rule_decode.py"), namespace="tasks.gated_delta_rule_decode")


class FusedRecurrentGatedDeltaRule(_eager.FusedRecurrentGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state):
        group = v.shape[2] // q.shape[2]
        q32, k32 = q[:, 0].float(), k[:, 0].float()
        if self.use_qk_l2norm:
            q32, k32 = _eager.l2norm(q32), _eager.l2norm(k32)
        q32 = q32.repeat_interleave(group, dim=1) * q.shape[-1] ** -0.5
        k32 = k32.repeat_interleave(group, dim=1)
        state = initial_state.float() * g[:, 0].float().exp()[..., None, None]
        kv_mem = (state * k32[..., None]).sum(dim=-2)
        delta = (v[:, 0].float() - kv_mem) * beta[:, 0].float()[..., None]
        state = state + k32[..., None] * delta[..., None, :]
        o = (state * q32[..., None]).sum(dim=-2)
        return o.unsqueeze(1).to(q.dtype), state

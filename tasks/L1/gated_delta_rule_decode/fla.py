"""The decode step through flash-linear-attention's fused recurrent Triton kernel,
fla.ops.gated_delta_rule.fused_recurrent_gated_delta_rule(..., use_qk_l2norm_in_kernel=True), as transformers'
Qwen3NextGatedDeltaNet calls it while generating: q and k heads repeated to the value heads first, default scale
K^-0.5, new state returned in fp32 (the cached state is not modified)."""

from __future__ import annotations

from pathlib import Path

from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gated_delta_rule_decode.py"), namespace="tasks.gated_delta_rule_decode")


class FusedRecurrentGatedDeltaRule(_eager.FusedRecurrentGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state):
        group = v.shape[2] // q.shape[2]
        if group > 1:
            q, k = q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)
        o, final_state = fused_recurrent_gated_delta_rule(
            q=q, k=k, v=v, g=g, beta=beta, initial_state=initial_state, output_final_state=True,
            use_qk_l2norm_in_kernel=self.use_qk_l2norm,
        )
        return o, final_state

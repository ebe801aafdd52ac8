"""The decode step through flash-linear-attention's fused recurrent Triton kernel with the value heads grouped in the
kernel (GVA): fla.ops.gated_delta_rule.fused_recurrent_gated_delta_rule(..., use_qk_l2norm_in_kernel=True) given q
and k at their own head count, as FLA's GatedDeltaNet layer calls it while generating (flash-linear-attention 0.6).
Value head j reads q/k head j // (num_v_heads / num_k_heads), the mapping transformers' repeat_interleave gives
(fla.py), without the two copy kernels it launches a step. Default scale K^-0.5, new state returned in fp32 (the
cached state is not modified)."""

from __future__ import annotations

from pathlib import Path

from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gated_delta_rule_decode.py"), namespace="tasks.gated_delta_rule_decode")


class FusedRecurrentGatedDeltaRule(_eager.FusedRecurrentGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state):
        o, final_state = fused_recurrent_gated_delta_rule(
            q=q, k=k, v=v, g=g, beta=beta, initial_state=initial_state, output_final_state=True,
            use_qk_l2norm_in_kernel=self.use_qk_l2norm,
        )
        return o, final_state

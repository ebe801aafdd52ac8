"""The gated delta rule through flash-linear-attention's chunked Triton kernels with the value heads grouped in the
kernel (GVA): fla.ops.gated_delta_rule.chunk_gated_delta_rule(..., use_qk_l2norm_in_kernel=True) given q and k at
their own head count, as FLA's GatedDeltaNet layer calls it (flash-linear-attention 0.6). Value head j reads q/k head
j // (num_v_heads / num_k_heads), the mapping transformers' repeat_interleave gives (fla.py), without the two copies
of q and k it costs. Default scale K^-0.5, final state in fp32."""

from __future__ import annotations

from pathlib import Path

from fla.ops.gated_delta_rule import chunk_gated_delta_rule

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gated_delta_rule.py"), namespace="tasks.gated_delta_rule")


class ChunkGatedDeltaRule(_eager.ChunkGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state=None):
        o, final_state = chunk_gated_delta_rule(
            q=q, k=k, v=v, g=g, beta=beta, initial_state=initial_state, output_final_state=True,
            use_qk_l2norm_in_kernel=self.use_qk_l2norm,
        )
        return o, final_state

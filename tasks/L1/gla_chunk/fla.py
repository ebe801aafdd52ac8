"""Gated linear attention through flash-linear-attention's chunked Triton kernels, fla.ops.gla.chunk_gla (what
FLA's GatedLinearAttention layer calls in chunk mode), with the default scale K^-0.5 and the final state in fp32."""

from __future__ import annotations

from pathlib import Path

from fla.ops.gla import chunk_gla

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gla_chunk.py"), namespace="tasks.gla_chunk")


class ChunkGLA(_eager.ChunkGLA):
    def forward(self, q, k, v, g, initial_state=None):
        o, final_state = chunk_gla(q=q, k=k, v=v, g=g, initial_state=initial_state, output_final_state=True)
        return o, final_state

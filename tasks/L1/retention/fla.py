"""Retention through flash-linear-attention's chunked Triton kernels, fla.ops.retention.chunk_retention (what FLA's
MultiScaleRetention layer calls in chunk mode; it runs chunk_simple_gla with log decays log(1 - 2^(-5 - h))),
default scale K^-0.5, final state in fp32."""

from __future__ import annotations

from pathlib import Path

from fla.ops.retention import chunk_retention

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("retention.py"), namespace="tasks.retention")


class ChunkRetention(_eager.ChunkRetention):
    def forward(self, q, k, v, initial_state=None):
        o, final_state = chunk_retention(q=q, k=k, v=v, initial_state=initial_state, output_final_state=True)
        return o, final_state

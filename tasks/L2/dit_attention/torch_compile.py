"""FluxSingleAttention as the composed production path builds it (dit_attention.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a FLUX model runs, the q/k
RMSNorms and the rotary embedding fused into passes around the QKV GEMM and the head reshapes folded into them; the
GEMMs stay cuBLAS's and the attention SDPA's."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dit_attention.py"), namespace="tasks.dit_attention")

FluxSingleAttention = compiled(_composed.FluxSingleAttention)

"""VJEPA2RopeAttention as the composed production path builds it (spacetime_attention.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a V-JEPA 2 model runs, the
3-D rope and the head reshapes fused into passes after the QKV GEMM; the GEMMs stay cuBLAS's and the attention
SDPA's."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("spacetime_attention.py"), namespace="tasks.spacetime_attention")

VJEPA2RopeAttention = compiled(_composed.VJEPA2RopeAttention)

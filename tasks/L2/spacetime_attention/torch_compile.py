"""VJEPA2RopeAttention as the composed production path builds it (spacetime_attention.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a V-JEPA 2 model runs.
Inductor can fuse the PyTorch work between the library kernels (the 3-D rope, whose first production implementation
is transformers' PyTorch path, and the head reshapes); the GEMMs stay cuBLAS's and the attention SDPA's."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("spacetime_attention.py"), namespace="tasks.spacetime_attention")

VJEPA2RopeAttention = compiled(_composed.VJEPA2RopeAttention)

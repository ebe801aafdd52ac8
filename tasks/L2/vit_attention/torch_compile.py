"""SiglipAttention as the composed production path builds it (vit_attention.py over the first production L1 classes),
its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a SigLIP model runs. Inductor can
fuse only the head reshapes and copies between the library kernels; the GEMMs stay cuBLAS's and the attention SDPA's."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("vit_attention.py"), namespace="tasks.vit_attention")

SiglipAttention = compiled(_composed.SiglipAttention)

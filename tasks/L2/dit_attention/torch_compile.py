"""FluxSingleAttention as the composed production path builds it (dit_attention.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a FLUX model runs.
Inductor can fuse the PyTorch work between the library kernels (the inline rotary embedding and the head reshapes);
the GEMMs stay cuBLAS's, the attention SDPA's and, where Liger is installed, the q/k RMSNorms Liger's Triton kernels."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dit_attention.py"), namespace="tasks.dit_attention")

FluxSingleAttention = compiled(_composed.FluxSingleAttention)

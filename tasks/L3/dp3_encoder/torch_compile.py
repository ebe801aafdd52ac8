"""DP3Encoder as the composed production path builds it (dp3_encoder.py over the first production lower-level classes),
its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on DP3's policy runs. Inductor can fuse
the PyTorch work between the library kernels (the point encoder's ReLUs and max, the state MLP's ReLU, the
concatenation); the GEMMs stay cuBLAS's and, where Liger is installed, the LayerNorms Liger's Triton kernels."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dp3_encoder.py"), namespace="tasks.dp3_encoder")

DP3Encoder = compiled(_composed.DP3Encoder)

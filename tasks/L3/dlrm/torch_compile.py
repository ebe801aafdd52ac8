"""DLRM as the composed production path builds it (dlrm.py over the first production lower-level classes), its forward
compiled by Inductor (fastkernels.compiled): what `torch.compile` on a torchrec DLRM runs. Inductor can fuse the
PyTorch work between the library kernels (the top MLP's ReLUs, the stack of pooled embeddings, the interaction's
gather and concatenation); the GEMMs stay cuBLAS's and the embedding bags PyTorch's kernel."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dlrm.py"), namespace="tasks.dlrm")

DLRM = compiled(_composed.DLRM)

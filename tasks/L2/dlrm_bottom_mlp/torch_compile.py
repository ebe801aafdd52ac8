"""DenseArch as the composed production path builds it (dense_arch.py over the production linear class), its forward
compiled by Inductor (fastkernels.compiled): what `torch.compile` on a torchrec DLRM gives, the ReLUs fused after
the cuBLAS GEMMs."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dense_arch.py"), namespace="tasks.dlrm_bottom_mlp")

DenseArch = compiled(_composed.DenseArch)

"""DLRM as the composed production path builds it (dlrm.py over the first production lower-level classes), its
forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a torchrec DLRM runs, the MLPs'
activations fused after their GEMMs and the interaction's gather and concatenation fused into the top MLP's input;
the embedding bags stay PyTorch's kernels."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dlrm.py"), namespace="tasks.dlrm")

DLRM = compiled(_composed.DLRM)

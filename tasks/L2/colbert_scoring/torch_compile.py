"""ColBERT as the composed production path builds it (colbert.py over the first production L1 classes), its
forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a ColBERT scorer runs: the masking and
L2 normalisation fused after the cuBLAS projections, and MaxSim's max and sum over the similarity GEMM's output."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("colbert.py"), namespace="tasks.colbert_scoring")

ColBERT = compiled(_composed.ColBERT)

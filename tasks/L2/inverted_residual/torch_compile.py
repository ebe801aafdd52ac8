"""InvertedResidual as the composed production path builds it (inverted_residual.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a timm model runs: each
batch norm and activation, and the residual add, fused after its cuDNN convolution."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("inverted_residual.py"), namespace="tasks.inverted_residual")

InvertedResidual = compiled(_composed.InvertedResidual)

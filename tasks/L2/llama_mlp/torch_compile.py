"""LlamaMLP as the composed production path builds it (llama_mlp.py over the first production L1 classes), its forward
compiled by Inductor (fastkernels.compiled): as vLLM's compiled mode runs the block with its custom ops disabled,
SiluAndMul's native form fused between the cuBLAS GEMMs."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("llama_mlp.py"), namespace="tasks.llama_mlp")

LlamaMLP = compiled(_composed.LlamaMLP)

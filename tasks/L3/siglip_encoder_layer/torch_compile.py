"""SiglipEncoderLayer as the composed production path builds it (siglip_encoder_layer.py over the first production
lower-level classes), its forward compiled by Inductor (fastkernels.compiled): what vLLM's compiled mode and
`torch.compile` on a transformers SigLIP run: the residual adds, fc1's bias and the GELU fused around the cuBLAS
GEMMs and SDPA. On the GPU the composed LayerNorm is Liger's Triton kernel, which Dynamo is to trace as a
user-defined Triton kernel (a failure there leaves composed serving; the CPU check binds the eager components,
Liger's being cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("siglip_encoder_layer.py"), namespace="tasks.siglip_encoder_layer")

SiglipEncoderLayer = compiled(_composed.SiglipEncoderLayer)

"""ConvNeXtBlock as the composed production path builds it (convnext_block.py over the first production L1 classes),
its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a timm ConvNeXt runs: the permutes,
GELU, Global Response Norm and residual add fused into fewer kernels around the cuDNN depthwise convolution, the
LayerNorm and the cuBLAS GEMMs. On the GPU the composed module's LayerNorm is Liger's Triton kernel, which Dynamo is
to trace as a user-defined Triton kernel (not yet run on a GPU; the CPU check binds the eager components, Liger's being
cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("convnext_block.py"), namespace="tasks.convnext_block")

ConvNeXtBlock = compiled(_composed.ConvNeXtBlock)

"""Qwen2VisionBlock as the composed production path builds it (qwen2_vl_vision_block.py over the first production
lower-level classes), its forward compiled by Inductor (fastkernels.compiled): what vLLM's compiled mode runs with
its custom ops disabled: the residual adds, fc1's bias and QuickGELU fused around the cuBLAS GEMMs and SDPA. On the
GPU the composed LayerNorm and rope are Liger's Triton kernels, which Dynamo is to trace as user-defined Triton
kernels (a failure there leaves composed serving; the CPU check binds the eager components, Liger's
being cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("qwen2_vl_vision_block.py"), namespace="tasks.qwen2_vl_vision_block")

Qwen2VisionBlock = compiled(_composed.Qwen2VisionBlock)

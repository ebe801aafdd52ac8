"""VJEPA2Layer as the composed production path builds it (vjepa2_block.py over the first production lower-level
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a transformers V-JEPA 2
encoder runs: the 3-D rope's chain of bf16 PyTorch ops on q and k (per axis the sin and cos tables, the rotate-half
stack and the multiply-add, then the cat, each a kernel of its own in the composed module), the residual adds, fc1's
bias and the erf GELU fused around the cuBLAS GEMMs and SDPA. On the GPU the composed LayerNorm is Liger's Triton
kernel, which Dynamo is to trace as a user-defined Triton kernel (a failure there leaves composed serving; the CPU
check binds the eager components, Liger's being cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("vjepa2_block.py"), namespace="tasks.vjepa2_block")

VJEPA2Layer = compiled(_composed.VJEPA2Layer)

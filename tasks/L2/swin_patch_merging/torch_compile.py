"""Swinv2PatchMerging as the composed production path builds it (swin_patch_merging.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a SwinV2 model runs. The
composed path pads (odd sizes) and concatenates the four strided neighbour views in kernels of its own before the
reduction GEMM; compiled, that is at most one pass. The GEMM stays cuBLAS's and, where Liger is installed, the
LayerNorm Liger's Triton kernel."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("swin_patch_merging.py"), namespace="tasks.swin_patch_merging")

Swinv2PatchMerging = compiled(_composed.Swinv2PatchMerging)

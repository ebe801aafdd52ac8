"""Qwen2VisionAttention as the composed production path builds it (qwen2_vl_vision_attention.py over the first
production L1 classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on Qwen2-VL's
vision tower runs. Inductor can fuse only the head reshapes and copies between the library kernels; the GEMMs stay
cuBLAS's, the attention SDPA's and, where Liger is installed, the 2-D rope Liger's Triton kernel."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("qwen2_vl_vision_attention.py"),
                        namespace="tasks.qwen2_vl_vision_attention")

Qwen2VisionAttention = compiled(_composed.Qwen2VisionAttention)

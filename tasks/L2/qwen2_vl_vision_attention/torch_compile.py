"""Qwen2VisionAttention as the composed production path builds it (qwen2_vl_vision_attention.py over the first
production L1 classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a Qwen2-VL
vision tower model runs, the 2-D rope and the head reshapes fused into passes after the QKV GEMM; the GEMMs stay
cuBLAS's and the attention SDPA's."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("qwen2_vl_vision_attention.py"),
                        namespace="tasks.qwen2_vl_vision_attention")

Qwen2VisionAttention = compiled(_composed.Qwen2VisionAttention)

"""vLLM's native per-token-group fp8 quantization (vllm_native.py) compiled by Inductor into one fused kernel: what
vLLM's compiled models run when the quant_fp8 custom op is disabled (fastkernels.compiled: one compiled function for
every instance)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("vllm_native.py"), namespace="tasks.per_token_group_quant_fp8")

PerTokenGroupQuantFP8 = compiled(_native.PerTokenGroupQuantFP8)

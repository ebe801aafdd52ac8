"""Llama-3 rope through the rotary_embedding task's SGLang adapter (SGLang's JIT-built CUDA fused rope kernel, in
place on vLLM's layout) on the llama3-scaled fp32 table."""

from __future__ import annotations

from pathlib import Path

from fastkernels.implementations import import_file

_task = import_file(Path(__file__).with_name("llama3_rope.py"), namespace="tasks.llama3_rope")
_sglang = import_file(Path(__file__).parents[1] / "rotary_embedding" / "sglang_jit.py",
                      namespace="tasks.rotary_embedding")

Llama3RotaryEmbedding = _task.llama3(_sglang.RotaryEmbedding)

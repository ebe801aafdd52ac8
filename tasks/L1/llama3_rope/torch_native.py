"""Llama-3 rope through the rotary_embedding task's torch_native path (vLLM forward_native, vectorised, bf16 q/k
times the fp32 table) on the llama3-scaled table."""

from __future__ import annotations

from pathlib import Path

from fastkernels.implementations import import_file

_task = import_file(Path(__file__).with_name("llama3_rope.py"), namespace="tasks.llama3_rope")
_native = import_file(Path(__file__).parents[1] / "rotary_embedding" / "torch_native.py",
                      namespace="tasks.rotary_embedding")

Llama3RotaryEmbedding = _task.llama3(_native.RotaryEmbedding)

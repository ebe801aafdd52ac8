"""Row softmax through Liger-Kernel's Triton kernel: LigerSoftmaxFunction.apply(x) (liger_kernel.ops.softmax, as
LigerSoftmax calls it), one program per row. tl.max upcasts bf16 to fp32, so x - max, exp, the row sum and the
division run in fp32 and y is rounded once to x's dtype: this task's semantics, in one kernel. Liger refuses rows
wider than 65536 (its calculate_settings raises RuntimeError before the multi-block kernel is reached), so those
rows (the 128256-wide logits cases) take the torch_native path, and `fallback_reason` says so: the harness leaves
this implementation out of those cases' baseline choice."""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.softmax import LigerSoftmaxFunction

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.softmax")

MAX_FUSED_SIZE = 65536  # liger_kernel.ops.utils.calculate_settings: the widest row one block may hold


class Softmax(_native.Softmax):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        width = inputs["x"].shape[-1]
        return f"rows of {width} > {MAX_FUSED_SIZE}, which Liger refuses" if width > MAX_FUSED_SIZE else ""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({"x": x}):
            return super().forward(x)  # torch.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype)
        return LigerSoftmaxFunction.apply(x)

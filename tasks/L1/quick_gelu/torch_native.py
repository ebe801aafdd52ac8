"""vLLM QuickGELU.forward_native verbatim: x * torch.sigmoid(1.702 * x) in x's dtype (three PyTorch kernels, each
rounding to bf16; vLLM's CUDA path is ops.gelu_quick in vllm._C, not installable here)."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("quick_gelu.py"), namespace="tasks.quick_gelu")


class QuickGELU(_eager.QuickGELU):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)

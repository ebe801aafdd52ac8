"""GeluAndMul as vLLM's GeluAndMul.forward_native: F.gelu(x[..., :d], approximate) * x[..., d:] in x's own dtype
(two PyTorch elementwise kernels, each rounding to bf16)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gelu_and_mul.py"), namespace="tasks.gelu_and_mul")


class GeluAndMul(_eager.GeluAndMul):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.gelu(x[..., :d], approximate=self.approximate) * x[..., d:]

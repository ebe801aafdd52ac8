"""GeluAndMul through Liger-Kernel's Triton GEGLU kernel (LigerGELUMulFunction, liger_kernel.ops.geglu, the kernel of
LigerGEGLUMLP). The kernel implements only the tanh approximation, 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))
in fp32, rounded to x's dtype and multiplied by up in x's dtype; approximate="none" (exact erf GELU) falls back to
vLLM's forward_native. It takes gate and up as two tensors and makes them contiguous, so x's halves are copied
first (Liger's own MLP feeds it two separate projections)."""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.geglu import LigerGELUMulFunction

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.gelu_and_mul")


class GeluAndMul(_native.GeluAndMul):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        return "" if self.approximate == "tanh" else f"approximate={self.approximate!r} (Liger has only tanh GELU)"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({}):
            return super().forward(x)  # vLLM's forward_native
        gate, up = x.chunk(2, dim=-1)
        return LigerGELUMulFunction.apply(gate, up)

"""LayerNorm through Liger-Kernel's Triton kernel: LigerLayerNormFunction.apply(X, W, B, eps)
(liger_kernel.ops.layer_norm, as LigerLayerNorm calls it). One program per row; mean and variance in fp32,
y = (x - mean) * rstd * W + B stored in x's dtype. The kernel needs a weight and a bias, so a LayerNorm without
elementwise affine falls back to F.layer_norm (no task case uses that)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from liger_kernel.ops.layer_norm import LigerLayerNormFunction

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("layer_norm.py"), namespace="tasks.layer_norm")


class LayerNorm(_eager.LayerNorm):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        return "" if self.weight is not None else "no elementwise affine (Liger needs a weight and a bias)"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({}):
            return F.layer_norm(x, self.normalized_shape, None, None, self.eps)
        return LigerLayerNormFunction.apply(x, self.weight, self.bias, self.eps)

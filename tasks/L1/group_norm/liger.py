"""GroupNorm through Liger-Kernel's Triton kernel: LigerGroupNormFunction.apply(X, W, B, num_channels, num_groups, eps)
(liger_kernel.ops.group_norm, as LigerGroupNorm calls it). X is viewed as [batch, num_groups, -1]; one program per
(sample, group) takes mean and E[x^2] - mean^2 over the group (per-block sums in x's dtype, fp32 across blocks),
then stores (x - mean) * rstd * W[c] + B[c] in x's dtype. The kernel needs a weight and a bias, so a GroupNorm
without affine falls back to F.group_norm (no task case uses that)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from liger_kernel.ops.group_norm import LigerGroupNormFunction

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("group_norm.py"), namespace="tasks.group_norm")


class GroupNorm(_eager.GroupNorm):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        return "" if self.weight is not None else "no affine (Liger needs a weight and a bias)"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({}):
            return F.group_norm(x, self.num_groups, None, None, self.eps)
        return LigerGroupNormFunction.apply(x, self.weight, self.bias, self.num_channels, self.num_groups, self.eps)

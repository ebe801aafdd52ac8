"""GroupNorm through torch.nn.functional.group_norm: what torch.nn.GroupNorm.forward (and so diffusers) calls.
On CUDA it is PyTorch's native two-kernel GroupNorm (per-group moments in fp32, then one fused scale-shift pass)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("group_norm.py"), namespace="tasks.group_norm")


class GroupNorm(_eager.GroupNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

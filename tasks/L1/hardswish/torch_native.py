"""torch.nn.Hardswish.forward: F.hardswish(x) in x's dtype (PyTorch's vectorised kernel, fp32 math, one rounding),
what timm's MobileNetV3 runs for act_layer hard_swish."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("hardswish.py"), namespace="tasks.hardswish")


class Hardswish(_eager.Hardswish):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)

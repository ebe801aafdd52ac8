"""torch.nn.AdaptiveAvgPool2d.forward in x's dtype (ATen's adaptive average pool kernel, fp32 accumulation; what
timm's SelectAdaptivePool2d('avg') and torchvision classifiers call)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("adaptive_avg_pool2d.py"), namespace="tasks.adaptive_avg_pool2d")


class AdaptiveAvgPool2d(_eager.AdaptiveAvgPool2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

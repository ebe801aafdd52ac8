"""torch.nn.GELU.forward: F.gelu(x, approximate) in x's dtype (PyTorch's vectorised kernel computes in fp32 and
rounds once); what SigLIP / DINOv3 / ConvNeXtV2 run in transformers and timm, and vLLM's get_act_fn('gelu') /
('gelu_pytorch_tanh')."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("gelu.py"), namespace="tasks.gelu")


class GELU(_eager.GELU):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate=self.approximate)

"""timm LayerNorm2d.forward: permute NCHW to NHWC, F.layer_norm over the channels (PyTorch's fused LayerNorm
kernel, fp32 statistics), permute back (the result is a channels-last view, as timm returns it)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("layer_norm_2d.py"), namespace="tasks.layer_norm_2d")


class LayerNorm2d(_eager.LayerNorm2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, (self.num_channels,), self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)

"""timm BatchNormAct2d.forward in eval mode: F.batch_norm(x, running_mean, running_var, weight, bias,
training=False) (cuDNN / PyTorch's fused inference kernel on CUDA), then the activation, each rounded to x's dtype."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("batch_norm_act2d.py"), namespace="tasks.batch_norm_act2d")


class BatchNormAct2d(_eager.BatchNormAct2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        return _eager.torch_activation(x, self.act_layer)

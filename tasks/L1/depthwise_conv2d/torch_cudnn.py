"""torch.nn.Conv2d.forward with groups = channels in x's dtype: on CUDA, cuDNN's grouped convolution or PyTorch's
own depthwise kernel (conv_depthwise2d), whichever ATen picks for the shape; fp32 accumulation, one rounding."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("depthwise_conv2d.py"), namespace="tasks.depthwise_conv2d")


class DepthwiseConv2d(_eager.DepthwiseConv2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, 1, self.channels)

"""Depthwise Conv2d through cuDNN on channels_last (NHWC) tensors, as timm's ConvNeXt / MobileNet / EfficientNet run
after `model.to(memory_format=torch.channels_last)` (timm's `--channels-last`): cuDNN's NHWC depthwise kernels read
each pixel's channels contiguously, where NCHW grouped convolution has no fast path. The weight is kept
channels_last; x arrives NCHW as in the task, so this adapter pays one layout conversion of x per call, and returns
an NHWC-strided tensor of the same shape (the layout the next channels_last layer wants)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("depthwise_conv2d.py"), namespace="tasks.depthwise_conv2d")


class DepthwiseConv2d(_eager.DepthwiseConv2d):
    def __init__(self, channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = True) -> None:
        super().__init__(channels, kernel_size, stride, padding, bias)
        # Module.to(...) preserves the memory format, and load_state_dict copies into this layout.
        self.weight = nn.Parameter(self.weight.detach().contiguous(memory_format=torch.channels_last))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous(memory_format=torch.channels_last)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, 1, self.channels)

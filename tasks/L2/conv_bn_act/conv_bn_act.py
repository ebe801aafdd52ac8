"""Conv2d + inference BatchNorm + activation (timm ConvNormAct; ultralytics Conv, torchvision
Conv2dNormActivation): the building block of YOLOv10, EfficientNetV2 and MobileNetV4 stems and heads, built from
the conv2d and batch_norm_act2d tasks. Padding is timm's symmetric get_padding, ((stride - 1) + (kernel_size - 1))
// 2, which is ultralytics' autopad for odd kernels. The conv has no bias (the norm follows), as in all three.

Both classes come from component(...), so this one file is the eager module (eager components; in float64, the
oracle) and the production one (cuDNN conv, then PyTorch's batch norm + activation).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class ConvNormAct(nn.Module):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, stride: int, eps: float, act_layer: str
    ) -> None:
        super().__init__()
        Conv2d = component("conv2d")
        BatchNormAct2d = component("batch_norm_act2d")
        padding = ((stride - 1) + (kernel_size - 1)) // 2
        self.conv = Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.bn = BatchNormAct2d(out_channels, eps=eps, act_layer=act_layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))

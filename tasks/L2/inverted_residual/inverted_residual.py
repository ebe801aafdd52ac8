"""MobileNet's inverted residual (timm InvertedResidual without squeeze-excite; MobileNetV4's "IR" universal
inverted residual computes the same): 1x1 expand conv + BN + act, depthwise conv + BN + act, 1x1 project conv + BN,
plus the input when stride is 1 and the channel count is unchanged. Built from the conv2d, depthwise_conv2d and
batch_norm_act2d tasks via component(...), so this one file is the eager module (in float64, the oracle) and the
production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


def make_divisible(v: float, divisor: int = 8, min_value: int | None = None, round_limit: float = 0.9) -> int:
    """timm.layers.make_divisible: the expanded width, rounded to a multiple of 8 but never 10% below v."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class InvertedResidual(nn.Module):
    def __init__(
        self, in_chs: int, out_chs: int, dw_kernel_size: int, stride: int, exp_ratio: float, act_layer: str,
        eps: float,
    ) -> None:
        super().__init__()
        Conv2d = component("conv2d")
        DepthwiseConv2d = component("depthwise_conv2d")
        BatchNormAct2d = component("batch_norm_act2d")
        mid_chs = make_divisible(in_chs * exp_ratio)
        self.has_skip = in_chs == out_chs and stride == 1
        self.conv_pw = Conv2d(in_chs, mid_chs, 1, 1, 0, bias=False)
        self.bn1 = BatchNormAct2d(mid_chs, eps=eps, act_layer=act_layer)
        padding = ((stride - 1) + (dw_kernel_size - 1)) // 2
        self.conv_dw = DepthwiseConv2d(mid_chs, dw_kernel_size, stride, padding, bias=False)
        self.bn2 = BatchNormAct2d(mid_chs, eps=eps, act_layer=act_layer)
        self.conv_pwl = Conv2d(mid_chs, out_chs, 1, 1, 0, bias=False)
        self.bn3 = BatchNormAct2d(out_chs, eps=eps, act_layer="identity")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        x = self.bn1(self.conv_pw(x))
        x = self.bn2(self.conv_dw(x))
        x = self.bn3(self.conv_pwl(x))
        if self.has_skip:
            x = x + shortcut
        return x

"""One feature level of the YOLOv10 detection head (ultralytics v10Detect, the one2one branch used at inference):
a box branch of two 3x3 Conv-BN-SiLU blocks and a 1x1 conv to 4 * reg_max distance bins, and a light class branch
(3x3 depthwise Conv-BN-SiLU, 1x1 Conv-BN-SiLU, twice, then a 1x1 conv to nc class logits), concatenated along the
channels. Built from conv_bn_act (L2) and conv2d, depthwise_conv2d, batch_norm_act2d (L1) via component(...), so
this one file is the eager module (in float64, the oracle) and the production one. Submodule names follow
ultralytics (cv2 / cv3 Sequentials of Conv modules with .conv and .bn).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component

BN_EPS = 1e-3  # ultralytics initialize_weights sets BatchNorm2d eps to 1e-3


class DWConv(nn.Module):
    """ultralytics Conv(c, c, 3, g=c): depthwise 3x3 conv (no bias) + BatchNorm + SiLU."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = component("depthwise_conv2d")(channels, 3, 1, 1, bias=False)
        self.bn = component("batch_norm_act2d")(channels, eps=BN_EPS, act_layer="silu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


class V10DetectLevel(nn.Module):
    def __init__(self, in_channels: int, box_channels: int, cls_channels: int, nc: int, reg_max: int) -> None:
        super().__init__()
        ConvNormAct = component("conv_bn_act")
        Conv2d = component("conv2d")
        self.cv2 = nn.Sequential(
            ConvNormAct(in_channels, box_channels, 3, 1, BN_EPS, "silu"),
            ConvNormAct(box_channels, box_channels, 3, 1, BN_EPS, "silu"),
            Conv2d(box_channels, 4 * reg_max, 1, 1, 0, bias=True),
        )
        self.cv3 = nn.Sequential(
            nn.Sequential(DWConv(in_channels), ConvNormAct(in_channels, cls_channels, 1, 1, BN_EPS, "silu")),
            nn.Sequential(DWConv(cls_channels), ConvNormAct(cls_channels, cls_channels, 1, 1, BN_EPS, "silu")),
            Conv2d(cls_channels, nc, 1, 1, 0, bias=True),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.cv2(x), self.cv3(x)), dim=1)

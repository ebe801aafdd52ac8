"""One ConvNeXtV2 block (timm ConvNeXtBlock with use_grn=True, no layer scale, as timm builds ConvNeXt-V2):
depthwise 7x7 conv -> channels-last LayerNorm -> MLP (fc1, GELU, Global Response Norm, fc2) -> back to NCHW, plus
the input. Built from depthwise_conv2d, layer_norm, linear, gelu and global_response_norm via component(...), so
this one file is the eager module (in float64, the oracle) and the production one. Submodule names follow timm, so
a timm ConvNeXt-V2 state dict loads into it.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class GlobalResponseNormMlp(nn.Module):
    """timm GlobalResponseNormMlp (channels last): fc2(grn(gelu(fc1(x))))."""

    def __init__(self, in_features: int, hidden_features: int) -> None:
        super().__init__()
        Linear = component("linear")
        GELU = component("gelu")
        GlobalResponseNorm = component("global_response_norm")
        self.fc1 = Linear(in_features, hidden_features, bias=True)
        self.act = GELU("none")
        self.grn = GlobalResponseNorm(hidden_features, eps=1e-6, channels_last=True)
        self.fc2 = Linear(hidden_features, in_features, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.grn(self.act(self.fc1(x))))


class ConvNeXtBlock(nn.Module):
    def __init__(self, in_chs: int, kernel_size: int = 7, mlp_ratio: int = 4) -> None:
        super().__init__()
        DepthwiseConv2d = component("depthwise_conv2d")
        LayerNorm = component("layer_norm")
        self.conv_dw = DepthwiseConv2d(in_chs, kernel_size, 1, kernel_size // 2, bias=True)
        self.norm = LayerNorm(in_chs, eps=1e-6)
        self.mlp = GlobalResponseNormMlp(in_chs, mlp_ratio * in_chs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        x = self.conv_dw(x).permute(0, 2, 3, 1)
        x = self.mlp(self.norm(x))
        return x.permute(0, 3, 1, 2) + shortcut

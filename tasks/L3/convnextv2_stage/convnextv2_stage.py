"""One ConvNeXtV2 stage (timm ConvNeXtStage as built for ConvNeXt-V2): downsample (channels-first LayerNorm, then
a 2x2 stride-2 conv to out_chs) followed by depth ConvNeXtV2 blocks. Built from layer_norm_2d and conv2d (L1) and
convnext_block (L2) via component(...), so this one file is the eager module (in float64, the oracle) and the
production one. Submodule names follow timm (downsample.0 / downsample.1, blocks.<i>).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs: int, out_chs: int, depth: int) -> None:
        super().__init__()
        LayerNorm2d = component("layer_norm_2d")
        Conv2d = component("conv2d")
        ConvNeXtBlock = component("convnext_block")
        self.downsample = nn.Sequential(LayerNorm2d(in_chs, eps=1e-6), Conv2d(in_chs, out_chs, 2, 2, 0, bias=True))
        self.blocks = nn.Sequential(*(ConvNeXtBlock(out_chs, 7, 4) for _ in range(depth)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.downsample(x))

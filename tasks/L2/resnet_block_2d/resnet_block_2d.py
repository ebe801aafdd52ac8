"""diffusers ResnetBlock2D (SDXL UNet, default time-embedding norm) built from the L1 tasks:
GroupNorm -> SiLU -> conv 3x3 -> + time_emb_proj(SiLU(temb)) -> GroupNorm -> SiLU -> conv 3x3, plus the input
(through a 1x1 conv_shortcut when the channel count changes). Dropout is 0 and output_scale_factor 1, as in SDXL.

GroupNorm, Conv2d and Linear come from component(...), so this one file is the eager module (eager components; in
float64, the oracle) and the production one. The SiLUs and adds stay inline, as diffusers runs them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, temb_channels: int = 512, groups: int = 32,
                 eps: float = 1e-6) -> None:
        super().__init__()
        GroupNorm = component("group_norm")
        Conv2d = component("conv2d")
        Linear = component("linear")
        self.norm1 = GroupNorm(groups, in_channels, eps=eps, affine=True)
        self.conv1 = Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.time_emb_proj = Linear(temb_channels, out_channels, bias=True)
        self.norm2 = GroupNorm(groups, out_channels, eps=eps, affine=True)
        self.conv2 = Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.conv_shortcut = (
            Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0) if in_channels != out_channels else None
        )

    def forward(self, input_tensor: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        hidden_states = self.conv1(F.silu(self.norm1(input_tensor)))
        hidden_states = hidden_states + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        hidden_states = self.conv2(F.silu(self.norm2(hidden_states)))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return input_tensor + hidden_states

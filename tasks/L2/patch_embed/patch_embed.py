"""diffusers PatchEmbed as DiT and PixArt-alpha use it, built from the conv2d task: a patch_size x patch_size conv
with stride patch_size, flatten to tokens [batch, patches, embed_dim] (row-major), plus the fixed 2-D sin-cos
position table (no LayerNorm: layer_norm=False, flatten=True, pos_embed_type "sincos", no pos_embed_max_size).

Conv2d comes from component(...), so this one file is the eager module (eager components; in float64, the oracle)
and the production one. The position table is diffusers' get_2d_sincos_pos_embed for this grid, a non-persistent
buffer that follows the module's dtype exactly as in diffusers (so a bf16 module adds a bf16-rounded table).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


def sincos_1d(embed_dim: int, pos: torch.Tensor) -> torch.Tensor:
    omega = 1.0 / 10000 ** (torch.arange(embed_dim // 2, dtype=torch.float64) / (embed_dim / 2.0))
    out = torch.outer(pos.reshape(-1), omega)
    return torch.cat([torch.sin(out), torch.cos(out)], dim=1)


def sincos_2d(embed_dim: int, grid_size: int, base_size: int, interpolation_scale: float) -> torch.Tensor:
    """diffusers get_2d_sincos_pos_embed: [grid_size^2, embed_dim], column features first, then row features."""
    coords = torch.arange(grid_size, dtype=torch.float32) / (grid_size / base_size) / interpolation_scale
    grid_w, grid_h = torch.meshgrid(coords, coords, indexing="xy")  # "here w goes first", as diffusers
    return torch.cat([sincos_1d(embed_dim // 2, grid_w), sincos_1d(embed_dim // 2, grid_h)], dim=1)


class PatchEmbed(nn.Module):
    def __init__(self, height: int, width: int, patch_size: int, in_channels: int, embed_dim: int,
                 layer_norm: bool = False, flatten: bool = True, bias: bool = True,
                 interpolation_scale: float = 1) -> None:
        super().__init__()
        if layer_norm or not flatten or height != width:
            raise ValueError("this task is DiT / PixArt's PatchEmbed: square, flatten=True, layer_norm=False")
        Conv2d = component("conv2d")
        self.patch_size = patch_size
        self.proj = Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size, padding=0, bias=bias)
        grid = height // patch_size
        table = sincos_2d(embed_dim, grid, base_size=grid, interpolation_scale=interpolation_scale)
        self.register_buffer("pos_embed", table.float().unsqueeze(0), persistent=False)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        latent = self.proj(latent).flatten(2).transpose(1, 2)
        return (latent + self.pos_embed).to(latent.dtype)

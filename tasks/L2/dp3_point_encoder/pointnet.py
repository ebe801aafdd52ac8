"""3D Diffusion Policy's point-cloud encoder (DP3 PointNetEncoderXYZ with use_layernorm and a layernorm final
projection) built from the linear and layer_norm tasks: a per-point MLP 3 -> 64 -> 128 -> 256 (Linear, LayerNorm,
ReLU each), max-pool over the points, then Linear 256 -> out_channels and LayerNorm. Submodule names follow DP3's
(mlp.0 ... mlp.8, final_projection.0/1), so its checkpoints load. The classes come from component(...): this one
file is the eager module and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component

BLOCK_CHANNELS = (64, 128, 256)


class PointNetEncoderXYZ(nn.Module):
    def __init__(self, in_channels: int = 3, out_channels: int = 64) -> None:
        super().__init__()
        Linear = component("linear")
        LayerNorm = component("layer_norm")
        layers: list[nn.Module] = []
        for a, b in zip((in_channels, *BLOCK_CHANNELS[:-1]), BLOCK_CHANNELS):
            layers += [Linear(a, b, bias=True), LayerNorm(b, 1e-5, True), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.final_projection = nn.Sequential(Linear(BLOCK_CHANNELS[-1], out_channels, bias=True),
                                              LayerNorm(out_channels, 1e-5, True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.mlp(x)
        x = torch.max(x, 1)[0]
        return self.final_projection(x)

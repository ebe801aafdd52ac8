"""3D Diffusion Policy's observation encoder (DP3Encoder) built from lower tasks: the point-cloud encoder
(dp3_point_encoder, L2: per-point MLP, max-pool, projection) and the robot-state MLP (Linear, ReLU, Linear from the
linear task, DP3's create_mlp with state_mlp_size (64, 64)); the two features are concatenated into the
conditioning vector of DP3's diffusion U-Net. Submodule names follow DP3's (extractor, state_mlp). Every class comes
from component(...), so this one file is the eager module and the production one.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component

STATE_MLP_SIZE = (64, 64)


class DP3Encoder(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, state_dim: int) -> None:
        super().__init__()
        PointNetEncoderXYZ = component("dp3_point_encoder")
        Linear = component("linear")
        self.extractor = PointNetEncoderXYZ(in_channels, out_channels)
        self.state_mlp = nn.Sequential(Linear(state_dim, STATE_MLP_SIZE[0], bias=True), nn.ReLU(),
                                       Linear(STATE_MLP_SIZE[0], STATE_MLP_SIZE[1], bias=True))

    def forward(self, point_cloud: torch.Tensor, agent_pos: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.extractor(point_cloud), self.state_mlp(agent_pos)], dim=-1)

"""SwinV2's patch merging between stages (transformers Swinv2PatchMerging): each 2x2 neighbourhood of tokens is
concatenated to 4 * dim channels (order (0,0), (1,0), (0,1), (1,1)), reduced to 2 * dim by a bias-free linear and
then LayerNorm-ed (SwinV2's post-norm). Odd heights or widths are zero-padded first, as transformers does. Built
from the linear and layer_norm tasks via component(...), so this one file is the eager module (in float64, the
oracle) and the production one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class Swinv2PatchMerging(nn.Module):
    def __init__(self, input_height: int, input_width: int, dim: int) -> None:
        super().__init__()
        self.input_resolution = (input_height, input_width)
        self.dim = dim
        self.reduction = component("linear")(4 * dim, 2 * dim, bias=False)
        self.norm = component("layer_norm")(2 * dim, eps=1e-5)

    def forward(self, input_feature: torch.Tensor) -> torch.Tensor:
        height, width = self.input_resolution
        batch = input_feature.shape[0]
        x = input_feature.view(batch, height, width, self.dim)
        if height % 2 or width % 2:
            x = F.pad(x, (0, 0, 0, width % 2, 0, height % 2))
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], dim=-1)
        return self.norm(self.reduction(x.view(batch, -1, 4 * self.dim)))

"""diffusers HunyuanVideoPatchEmbed.forward verbatim in x's dtype: F.conv3d with kernel == stride (cuDNN), then
flatten(2).transpose(1, 2), which returns a transposed view of the conv output (no copy)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("conv3d_patch_embed.py"), namespace="tasks.conv3d_patch_embed")


class HunyuanVideoPatchEmbed(_eager.HunyuanVideoPatchEmbed):
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        out = F.conv3d(hidden_states, self.weight, self.bias, stride=self.patch_size)
        return out.flatten(2).transpose(1, 2)

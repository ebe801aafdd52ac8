"""diffusers' get_timestep_embedding verbatim (fp32 exponent, fp32 args, sin/cos, cat, flip by cat of halves, pad
for odd widths), then the caller's .to(model dtype): the ~10 small PyTorch kernels diffusers launches."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("timestep_embedding.py"), namespace="tasks.timestep_embedding")


class Timesteps(_eager.Timesteps):
    def forward(self, timesteps: torch.Tensor) -> torch.Tensor:
        half_dim = self.num_channels // 2
        exponent = -math.log(_eager.MAX_PERIOD) * torch.arange(
            start=0, end=half_dim, dtype=torch.float32, device=timesteps.device
        )
        exponent = exponent / (half_dim - self.downscale_freq_shift)
        emb = torch.exp(exponent)
        emb = timesteps[:, None].float() * emb[None, :]
        emb = self.scale * emb
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
        if self.flip_sin_to_cos:
            emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
        if self.num_channels % 2 == 1:
            emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
        return emb.to(timesteps.dtype)

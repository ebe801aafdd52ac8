"""Sinusoidal timestep embedding (diffusers Timesteps / get_timestep_embedding) in plain PyTorch, followed by the
cast to the model's dtype that every caller does (FLUX, SDXL, HunyuanVideo). Also the float64 oracle.

freq_i = exp(-ln(10000) * i / (half - downscale_freq_shift)) for i < half = num_channels // 2; the embedding is
[sin(scale * t * freq) | cos(scale * t * freq)], halves swapped when flip_sin_to_cos, with a zero column appended
when num_channels is odd. diffusers computes in fp32; here in at least fp32 and rounded once to timesteps' dtype.
"""

from __future__ import annotations

import math

import torch
from torch import nn

MAX_PERIOD = 10000


class Timesteps(nn.Module):
    def __init__(self, num_channels: int, flip_sin_to_cos: bool, downscale_freq_shift: float, scale: float = 1) -> None:
        super().__init__()
        self.num_channels = num_channels
        self.flip_sin_to_cos = flip_sin_to_cos
        self.downscale_freq_shift = downscale_freq_shift
        self.scale = scale

    def forward(self, timesteps: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(timesteps.dtype, torch.float32)
        half = self.num_channels // 2
        exponent = -math.log(MAX_PERIOD) * torch.arange(half, dtype=compute, device=timesteps.device)
        freqs = torch.exp(exponent / (half - self.downscale_freq_shift))
        args = self.scale * (timesteps.to(compute)[:, None] * freqs[None, :])
        sin, cos = torch.sin(args), torch.cos(args)
        emb = torch.cat([cos, sin] if self.flip_sin_to_cos else [sin, cos], dim=-1)
        if self.num_channels % 2:
            emb = torch.nn.functional.pad(emb, (0, 1))
        return emb.to(timesteps.dtype)

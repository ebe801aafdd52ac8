"""Whisper's encoder front end (transformers WhisperEncoder up to its first layer) built from the L1 tasks:
gelu(conv1(mel)) -> gelu(conv2(.)) with stride 2 -> [batch, positions, d_model] -> + embed_positions.

Conv1d and GELU come from component(...), so this one file is the eager module (eager components; in float64, the
oracle) and the production one. embed_positions is transformers' nn.Embedding initialised with Whisper's
sinusoids (the checkpoint stores those values); its whole table is added, as transformers does.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fastkernels.composition import component


def sinusoids(length: int, channels: int, max_timescale: float = 10000) -> torch.Tensor:
    """transformers' (and OpenAI's) Whisper position table: [sin | cos] of positions times geometric rates."""
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length).view(-1, 1) * inv_timescales.view(1, -1)
    return torch.cat([scaled_time.sin(), scaled_time.cos()], dim=1)


class WhisperConvFrontend(nn.Module):
    def __init__(self, num_mel_bins: int, d_model: int, max_source_positions: int) -> None:
        super().__init__()
        Conv1d = component("conv1d")
        GELU = component("gelu")
        self.conv1 = Conv1d(num_mel_bins, d_model, kernel_size=3, stride=1, padding=1)
        self.conv2 = Conv1d(d_model, d_model, kernel_size=3, stride=2, padding=1)
        self.act = GELU("none")
        self.embed_positions = nn.Embedding(max_source_positions, d_model)
        with torch.no_grad():
            self.embed_positions.weight.copy_(sinusoids(max_source_positions, d_model))

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        inputs_embeds = self.act(self.conv1(input_features))
        inputs_embeds = self.act(self.conv2(inputs_embeds)).permute(0, 2, 1)
        return inputs_embeds + self.embed_positions.weight

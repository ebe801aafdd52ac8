"""2-D vision rope through Liger-Kernel's Triton rope kernel (LigerRopeFunction, liger_kernel.ops.rope).

The vision rotation is a neox rotation over the whole head whose per-channel cos/sin happen to come from two
position streams, so Liger's kernel applies it unchanged: q and k [tokens, heads, head_dim] are passed as
[1, heads, tokens, head_dim] views with cos/sin [1, tokens, head_dim] (the kernel reads the first half: the row
channels, then the column channels). The kernel rotates in the fp32 table's dtype and stores into contiguous q and
k in place, which the task allows.
"""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.rope import LigerRopeFunction

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("vision_rope_2d.py"), namespace="tasks.vision_rope_2d")


class VisionRotaryEmbedding2D(_eager.VisionRotaryEmbedding2D):
    def forward(self, grid_positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor):
        cos, sin = self.cos_sin(grid_positions)
        cos, sin = cos.repeat(1, 2).unsqueeze(0), sin.repeat(1, 2).unsqueeze(0)  # [1, tokens, head_dim]
        qv = q.unsqueeze(0).transpose(1, 2)  # [1, heads, tokens, head_dim] over [1, tokens, heads, head_dim]
        kv = k.unsqueeze(0).transpose(1, 2)
        qo, ko = LigerRopeFunction.apply(qv, kv, cos, sin)
        return qo.transpose(1, 2)[0], ko.transpose(1, 2)[0]

"""Sliding-window attention through torch's scaled_dot_product_attention with a boolean band mask, as transformers'
`sdpa` attention runs Mistral's and Gemma's sliding layers (PyTorch picks the memory-efficient or cuDNN backend for
a masked call; FlashAttention's backend takes no mask). The [seq, seq] mask is built per call, as transformers does.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("sliding_window_attention.py"),
                     namespace="tasks.sliding_window_attention")


def band_mask(seq: int, window: int, device: torch.device) -> torch.Tensor:
    """True where query i may attend key j: i - window < j <= i."""
    pos = torch.arange(seq, device=device)
    offset = pos[:, None] - pos[None, :]
    return (offset >= 0) & (offset < window)


class SlidingWindowAttention(_eager.SlidingWindowAttention):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        mask = band_mask(q.shape[1], self.sliding_window, q.device)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask, scale=self.softmax_scale,
            enable_gqa=self.num_kv_heads != self.num_heads,
        )
        return out.transpose(1, 2)

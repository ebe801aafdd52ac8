"""Sliding-window attention through FlexAttention (torch.nn.attention.flex_attention, compiled to a Triton flash
kernel) with a sliding-window causal block mask: blocks wholly outside the band are skipped, so the work grows with
seq * window, not seq^2. This is transformers' `flex_attention` backend for sliding layers and the attention of
gpt-fast / torchtitan. The block mask is built once per (seq, device) and cached."""

from __future__ import annotations

from pathlib import Path

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("sliding_window_attention.py"),
                     namespace="tasks.sliding_window_attention")
_compiled = torch.compile(flex_attention, dynamic=False)


class SlidingWindowAttention(_eager.SlidingWindowAttention):
    def _block_mask(self, seq: int, device: torch.device):
        cache = self.__dict__.setdefault("_masks", {})
        key = (seq, str(device))
        if key not in cache:
            window = self.sliding_window

            def sliding_causal(b, h, q_idx, kv_idx):
                return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

            cache[key] = create_block_mask(sliding_causal, None, None, seq, seq, device=device)
        return cache[key]

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = _compiled(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), block_mask=self._block_mask(q.shape[1], q.device),
            scale=self.softmax_scale, enable_gqa=self.num_kv_heads != self.num_heads,
        )
        return out.transpose(1, 2)

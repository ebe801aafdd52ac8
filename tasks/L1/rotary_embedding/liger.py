"""Rotary embedding through Liger-Kernel's Triton rope kernel (LigerRopeFunction, liger_kernel.ops.rope).

Liger implements the HuggingFace Llama rotation, i.e. vLLM's neox layout (rotate halves) over the whole head, on
q/k laid out [batch, seq, heads, head_dim] and passed as [batch, heads, seq, head_dim] views, with cos/sin of shape
[1, seq, head_dim] (HF's duplicated halves; the kernel reads the first half). vLLM's [tokens, heads * head_size]
layout is exactly that with batch 1, so contiguous q/k are passed as views: the kernel loads them, rotates in the
cos/sin dtype (fp32 here, the same table as the eager module) and stores back in place, rounding once (strided q/k,
e.g. slices of a fused qkv output, are copied first by Liger and the rotated copies returned). It has no GPT-J
(interleaved) layout and no partial rotary dim: those fall back to the vectorised PyTorch path (torch_native.py).
"""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.rope import LigerRopeFunction

from fastkernels.implementations import import_file

# The vectorised PyTorch production path (same cos/sin table, same fp32 buffer handling) is the base class.
_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.rotary_embedding")


class RotaryEmbedding(_native.RotaryEmbedding):
    def fallback_reason(self, inputs: dict[str, torch.Tensor | None]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        if inputs.get("key") is None:
            return "no key (Liger rotates q and k together)"
        if not self.is_neox_style:
            return "GPT-J (interleaved) layout"
        if self.rotary_dim != self.head_size:
            return f"partial rotary dim ({self.rotary_dim} of {self.head_size})"
        return ""

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None = None):
        if self.fallback_reason({"key": key}):
            return super().forward(positions, query, key)
        tokens = query.shape[0]
        cos, sin = self.cos_sin_cache.index_select(0, positions.flatten()).chunk(2, dim=-1)
        cos, sin = cos.repeat(1, 2).unsqueeze(0), sin.repeat(1, 2).unsqueeze(0)  # [1, tokens, head_size]
        q = query.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        k = key.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        q, k = LigerRopeFunction.apply(q, k, cos, sin)
        return q.transpose(1, 2).reshape(query.shape), k.transpose(1, 2).reshape(key.shape)

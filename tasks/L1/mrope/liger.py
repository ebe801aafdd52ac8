"""M-RoPE through Liger-Kernel's Triton kernel (LigerQwen2VLMRopeFunction, liger_kernel.ops.qwen2vl_mrope), the
kernel vLLM's own triton_mrope was adapted from.

Liger takes q [batch, heads, seq, head_dim] and k as views of [batch, seq, heads, head_dim] storage and cos/sin
[3, batch, seq, head_dim] (HF's duplicated halves; the kernel reads the first half of each stream's row and picks
t/h/w channels by mrope_section). vLLM's [tokens, heads * head_size] layout is that with batch 1, so contiguous
q/k are rotated in place in the dtype of the fp32 table and rounded once. The kernel has no interleaved sections
(Qwen3-VL), no GPT-J layout and no partial rotary dim: those take the vectorised PyTorch path (torch_native.py).
"""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.mrope")


class MRotaryEmbedding(_native.MRotaryEmbedding):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run Liger's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        if self.mrope_interleaved:
            return "interleaved M-RoPE sections (Qwen3-VL)"
        if not self.is_neox_style:
            return "GPT-J (interleaved) layout"
        if self.rotary_dim != self.head_size:
            return f"partial rotary dim ({self.rotary_dim} of {self.head_size})"
        return ""

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        if self.fallback_reason({}):
            return super().forward(positions, query, key)
        tokens = query.shape[0]
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)  # [3, tokens, head_size / 2], fp32
        cos, sin = cos.repeat(1, 1, 2).unsqueeze(1), sin.repeat(1, 1, 2).unsqueeze(1)  # [3, 1, tokens, head_size]
        q = query.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        k = key.reshape(1, tokens, -1, self.head_size).transpose(1, 2)
        q, k = LigerQwen2VLMRopeFunction.apply(q, k, cos, sin, self.mrope_section)
        return q.transpose(1, 2).reshape(query.shape), k.transpose(1, 2).reshape(key.shape)

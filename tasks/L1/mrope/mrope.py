"""Multimodal rotary embedding (vLLM MRotaryEmbedding.forward_native, Qwen2-VL / Qwen2.5-VL / Qwen3-VL M-RoPE) in
plain PyTorch. Also the float64 oracle.

Every token has three positions (temporal, height, width). The rotary_dim / 2 frequency channels are split among
them by mrope_section [t, h, w]: chunked (Qwen2-VL: channels [0, t) rotate by the temporal position, the next h by
the height, the last w by the width) or interleaved (Qwen3-VL: channel i takes h when i % 3 == 1 and i < 3h, w when
i % 3 == 2 and i < 3w, else t). The cos/sin table is vLLM's _compute_cos_sin_cache in fp32 on the CPU, kept fp32 in
a bf16 module (as in the rotary_embedding task); the rotation is done in fp32 (float64 for the oracle), rounded once.
"""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.fp32_buffers import KeepsFp32Buffers
from fastkernels.implementations import import_file

_rotary = import_file(Path(__file__).parents[1] / "rotary_embedding" / "rotary_embedding.py",
                      namespace="tasks.rotary_embedding")


def cos_sin_cache(rotary_dim: int, max_position_embeddings: int, base: float) -> torch.Tensor:
    """vLLM's RotaryEmbedding._compute_cos_sin_cache, in fp32 on the CPU: [max_position_embeddings, rotary_dim]."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float, device="cpu") / rotary_dim))
    t = torch.arange(max_position_embeddings, dtype=torch.float, device="cpu")
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


def section_of_channel(mrope_section: list[int], interleaved: bool) -> torch.Tensor:
    """Which position stream (0 = t, 1 = h, 2 = w) drives each of the rotary_dim / 2 frequency channels."""
    half = sum(mrope_section)
    channels = torch.arange(half)
    if not interleaved:
        return torch.repeat_interleave(torch.arange(3), torch.tensor(mrope_section))
    stream = torch.zeros(half, dtype=torch.long)
    stream[(channels % 3 == 1) & (channels < 3 * mrope_section[1])] = 1
    stream[(channels % 3 == 2) & (channels < 3 * mrope_section[2])] = 2
    return stream


class MRotaryEmbedding(KeepsFp32Buffers):
    fp32_buffers = ("cos_sin_cache",)  # Module.to(bf16) must not round the table

    def __init__(
        self,
        head_size: int,
        rotary_dim: int,
        max_position_embeddings: int,
        base: float,
        is_neox_style: bool,
        mrope_section: list[int],
        mrope_interleaved: bool = False,
    ) -> None:
        super().__init__()
        assert sum(mrope_section) == rotary_dim // 2, "mrope_section must split rotary_dim / 2 channels"
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.is_neox_style = is_neox_style
        self.mrope_section = list(mrope_section)
        self.mrope_interleaved = mrope_interleaved
        self.register_buffer(
            "cos_sin_cache", cos_sin_cache(rotary_dim, max_position_embeddings, base), persistent=False
        )
        # int64, so Module.to(dtype) leaves it alone; on the module's device, so forward makes no host copies.
        self.register_buffer("channel_stream", section_of_channel(mrope_section, mrope_interleaved), persistent=False)

    def cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [tokens, rotary_dim / 2], each channel read at the position of its stream."""
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)  # [3, tokens, rotary_dim / 2] each
        index = self.channel_stream[None, None, :].expand(1, *cos.shape[1:])
        return cos.gather(0, index)[0], sin.gather(0, index)[0]

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        cos, sin = self.cos_sin(positions)
        return self._rotate(query, cos, sin), self._rotate(key, cos, sin)

    # The rotation of one head, given its cos/sin rows, is the rotary_embedding task's, unchanged.
    _rotate = _rotary.RotaryEmbedding._rotate

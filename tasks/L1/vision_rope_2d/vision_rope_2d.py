"""2-D rotary embedding of the Qwen2-VL vision tower (vLLM Qwen2VisionRotaryEmbedding + apply_rotary_pos_emb_vision,
also Qwen2.5-VL, Qwen2.5-Omni and Qwen3-VL) in plain PyTorch. Also the float64 oracle.

Each patch has a (row, col) grid position. With head_dim d, the d/4 frequencies theta^(-4j/d) are shared by both
axes: frequency channel j < d/4 turns by row * freq[j], channel d/4 + j by col * freq[j], and channel i of the
d/2 is applied to the neox pair (i, i + d/2), so the whole head is rotated. The angles come from a
[max_grid_size, d/4] fp32 table (vLLM's update_freqs_cache: fp32 inverse frequencies times fp32 positions) whose
cos/sin are kept fp32 in a bf16 module; the rotation is in fp32 (float64 for the oracle), rounded once.
"""

from __future__ import annotations

import torch

from fastkernels.fp32_buffers import KeepsFp32Buffers


def cos_sin_table(head_dim: int, theta: float, max_grid_size: int) -> torch.Tensor:
    """[max_grid_size, head_dim / 2]: cos | sin of position * theta^(-2j / (head_dim / 2)), j < head_dim / 4."""
    dim = head_dim // 2
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float, device="cpu") / dim))
    seq = torch.arange(max_grid_size, dtype=torch.float, device="cpu")
    freqs = torch.outer(seq, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


class VisionRotaryEmbedding2D(KeepsFp32Buffers):
    fp32_buffers = ("cos_sin_cache",)  # Module.to(bf16) must not round the table

    def __init__(self, head_dim: int, theta: float, max_grid_size: int) -> None:
        super().__init__()
        assert head_dim % 4 == 0, "two axes, each rotating head_dim / 4 pairs"
        self.head_dim = head_dim
        self.theta = theta
        self.max_grid_size = max_grid_size
        self.register_buffer("cos_sin_cache", cos_sin_table(head_dim, theta, max_grid_size), persistent=False)

    def cos_sin(self, grid_positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [tokens, head_dim / 2]: the row's d/4 channels, then the column's."""
        cos, sin = self.cos_sin_cache[grid_positions].chunk(2, dim=-1)  # [tokens, 2, head_dim / 4] each
        return cos.flatten(1), sin.flatten(1)

    def forward(self, grid_positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor):
        cos, sin = self.cos_sin(grid_positions)
        return self._rotate(q, cos, sin), self._rotate(k, cos, sin)

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        cos, sin = cos.unsqueeze(-2).to(compute), sin.unsqueeze(-2).to(compute)
        x1, x2 = h.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

"""vLLM MRotaryEmbedding.forward_native, vectorised: gather the fp32 cos/sin rows of the three position streams,
assemble each channel's stream (split by mrope_section and concatenated, or vLLM's apply_interleaved_rope), rotate
in fp32 and round once. (vLLM's CUDA path is its Triton kernel triton_mrope, adapted from Liger's; see liger.py.)"""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor and the fp32 table (one state for every implementation).
_eager = import_file(Path(__file__).with_name("mrope.py"), namespace="tasks.mrope")
_rotary_native = import_file(Path(__file__).parents[1] / "rotary_embedding" / "torch_native.py",
                             namespace="tasks.rotary_embedding")


def apply_interleaved_rope(x: torch.Tensor, mrope_section: list[int]) -> torch.Tensor:
    """vLLM's apply_interleaved_rope: [3, tokens, half] -> [tokens, half] with channels t, h, w, t, h, w, ..."""
    channels = torch.arange(x.shape[-1], device=x.device)
    is_height = (channels % 3 == 1) & (channels < mrope_section[1] * 3)
    is_width = (channels % 3 == 2) & (channels < mrope_section[2] * 3)
    return torch.where(is_width, x[2], torch.where(is_height, x[1], x[0]))


class MRotaryEmbedding(_eager.MRotaryEmbedding):
    def cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)
        if self.mrope_interleaved:
            return apply_interleaved_rope(cos, self.mrope_section), apply_interleaved_rope(sin, self.mrope_section)
        cos = torch.cat([m[i] for i, m in enumerate(cos.split(self.mrope_section, dim=-1))], dim=-1)
        sin = torch.cat([m[i] for i, m in enumerate(sin.split(self.mrope_section, dim=-1))], dim=-1)
        return cos, sin

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """The rotary_embedding task's native rotation (bf16 math, as vLLM's forward_native) on one head's rows."""
        return _rotary_native.RotaryEmbedding._rotate(self, x, cos.unsqueeze(-2), sin.unsqueeze(-2))

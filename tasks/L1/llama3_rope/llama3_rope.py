"""Llama-3.1's rotary embedding (vLLM Llama3RotaryEmbedding): the rotary_embedding task's rotation with
frequencies rescaled by the llama3 rule. Also the float64 oracle.

The rotation, the fp32 cos/sin table kept fp32 in a bf16 module and its layout all come from the rotary_embedding
task's eager module (subclassed, not copied); only the table differs. `llama3(base)` makes the same subclass of any
rotary_embedding implementation, so the production adapters here are rotary_embedding's, on this table.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from fastkernels.implementations import import_file

_rope = import_file(Path(__file__).parents[1] / "rotary_embedding" / "rotary_embedding.py",
                    namespace="tasks.rotary_embedding")


def llama3_inv_freq(rotary_dim: int, base: float, scaling_factor: float, low_freq_factor: float,
                    high_freq_factor: float, orig_max_position: int) -> torch.Tensor:
    """vLLM Llama3RotaryEmbedding._compute_inv_freq, in fp32 on the CPU: long wavelengths divided by the factor,
    short ones kept, a smooth blend between the two wavelength bounds."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float, device="cpu") / rotary_dim))
    low_freq_wavelen = orig_max_position / low_freq_factor
    high_freq_wavelen = orig_max_position / high_freq_factor
    wave_len = 2 * math.pi / inv_freq
    if low_freq_factor != high_freq_factor:
        smooth = (orig_max_position / wave_len - low_freq_factor) / (high_freq_factor - low_freq_factor)
    else:
        smooth = 0
    return torch.where(
        wave_len < high_freq_wavelen,
        inv_freq,
        torch.where(wave_len > low_freq_wavelen, inv_freq / scaling_factor,
                    (1 - smooth) * inv_freq / scaling_factor + smooth * inv_freq),
    )


def llama3_cos_sin_cache(inv_freq: torch.Tensor, max_position_embeddings: int) -> torch.Tensor:
    """vLLM's _compute_cos_sin_cache over the given inverse frequencies: fp32 [max_position_embeddings, rotary_dim]."""
    t = torch.arange(max_position_embeddings, dtype=torch.float, device="cpu")
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


def llama3(base: type) -> type:
    """`base` (a rotary_embedding implementation) with vLLM Llama3RotaryEmbedding's constructor and table."""

    class Llama3RotaryEmbedding(base):
        def __init__(self, head_size: int, rotary_dim: int, max_position_embeddings: int, base: float,
                     is_neox_style: bool, scaling_factor: float, low_freq_factor: float, high_freq_factor: float,
                     orig_max_position: int) -> None:
            super().__init__(head_size, rotary_dim, max_position_embeddings, base, is_neox_style)
            self.scaling_factor = scaling_factor
            self.low_freq_factor = low_freq_factor
            self.high_freq_factor = high_freq_factor
            self.orig_max_position = orig_max_position
            inv_freq = llama3_inv_freq(rotary_dim, base, scaling_factor, low_freq_factor, high_freq_factor,
                                       orig_max_position)
            self.register_buffer("cos_sin_cache", llama3_cos_sin_cache(inv_freq, max_position_embeddings),
                                 persistent=False)

    return Llama3RotaryEmbedding


Llama3RotaryEmbedding = llama3(_rope.RotaryEmbedding)

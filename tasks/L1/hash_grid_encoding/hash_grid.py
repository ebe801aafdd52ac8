"""Instant-NGP's multiresolution hash encoding (nerfstudio HashEncoding) in plain PyTorch. Also the float64 oracle.

Level l has resolution floor(min_res * b^l), b = (max_res / min_res)^(1 / (num_levels - 1)). A position p in
[0, 1]^3 is scaled by it; the 8 integer corners of its cell are hashed as (x * 1) ^ (y * 2654435761) ^
(z * 805459861) mod 2^log2_hashmap_size (Teschner's primes; with a power-of-two table this equals tiny-cuda-nn's
uint32 hash) into the level's slice of hash_table [num_levels * table_size, features_per_level], and the corner
features are blended trilinearly. Output [N, num_levels * features_per_level], level-major. Every level is hashed
(nerfstudio's torch path; tiny-cuda-nn indexes coarse levels densely). fp32 (float64 for the oracle) weights and
sums, one rounding to the table's dtype.
"""

from __future__ import annotations

import math

import torch
from torch import nn

PRIMES = (1, 2654435761, 805459861)


def level_scalings(num_levels: int, min_res: int, max_res: int) -> torch.Tensor:
    """nerfstudio's scalings: floor(min_res * growth^l), growth = exp((log max_res - log min_res) / (L - 1))."""
    growth = math.exp((math.log(max_res) - math.log(min_res)) / (num_levels - 1)) if num_levels > 1 else 1.0
    return torch.floor(min_res * growth ** torch.arange(num_levels, dtype=torch.float64)).to(torch.int64)


def corner_hash(corners: torch.Tensor, table_size: int) -> torch.Tensor:
    """Integer corners [..., 3] (int64) -> slot in [0, table_size) per level."""
    h = corners[..., 0] * PRIMES[0]
    h = torch.bitwise_xor(h, corners[..., 1] * PRIMES[1])
    h = torch.bitwise_xor(h, corners[..., 2] * PRIMES[2])
    return h % table_size


class HashEncoding(nn.Module):
    def __init__(self, num_levels: int = 16, min_res: int = 16, max_res: int = 1024, log2_hashmap_size: int = 19,
                 features_per_level: int = 2) -> None:
        super().__init__()
        self.num_levels = num_levels
        self.features_per_level = features_per_level
        self.hash_table_size = 2**log2_hashmap_size
        # int64, so casting the module to bf16 cannot round the resolutions (1482 would become 1480)
        self.register_buffer("scalings", level_scalings(num_levels, min_res, max_res), persistent=False)
        self.register_buffer("hash_offset", torch.arange(num_levels) * self.hash_table_size, persistent=False)
        self.hash_table = nn.Parameter(torch.empty(self.hash_table_size * num_levels, features_per_level))

    def forward(self, in_tensor: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(in_tensor.dtype, torch.float32)
        scaled = in_tensor.to(compute)[..., None, :] * self.scalings.to(compute)[:, None]  # [N, L, 3]
        low = torch.floor(scaled)
        frac = scaled - low
        low = low.to(torch.int64)
        out = torch.zeros(*scaled.shape[:-1], self.features_per_level, dtype=compute, device=in_tensor.device)
        for corner in range(8):
            bits = torch.tensor([(corner >> axis) & 1 for axis in range(3)], device=in_tensor.device)
            index = corner_hash(low + bits, self.hash_table_size) + self.hash_offset
            weight = torch.where(bits.bool(), frac, 1 - frac).prod(dim=-1, keepdim=True)
            out = out + weight * self.hash_table[index].to(compute)
        return out.flatten(-2).to(self.hash_table.dtype)

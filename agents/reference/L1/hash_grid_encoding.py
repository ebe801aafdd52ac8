"""Instant-NGP's multiresolution hash encoding as one Triton kernel.

nerfstudio's torch path materialises the [N, levels, 3] scaled positions, eight int64 index tensors and eight
gathered feature tensors; Inductor, which compiles it for the production baseline, serves at 6-7% of the H200's
limit (what it fuses is not profiled). Here one program owns a block of points: it reads their positions once
and, level by level, scales them in fp32 (the same product the module computes, so the same cells), hashes the
cell's 8 corners in registers (x ^ 2654435761 y ^ 805459861 z, masked to the power-of-two table), gathers each
corner's features straight from the level's slice of the table (16 levels x 2^19 x 2 bf16 features is 32 MB, which
fits the GPU's L2) and blends them trilinearly in fp32, writing each level's features once, rounded once to the
table's dtype.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/hash_grid_encoding/hash_grid.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_hash_grid_encoding", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _hash_grid_kernel(p_ptr, scalings_ptr, table_ptr, out_ptr, n_points, num_levels, table_size, features,
                      p_sn, p_sd, prime_y, prime_z, BLOCK: tl.constexpr, BLOCK_F: tl.constexpr):
    # prime_y and prime_z (2654435761, 805459861) come in as int64 arguments: as literals the larger would be
    # typed uint32 and wrap
    rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    row_ok = rows < n_points
    f = tl.arange(0, BLOCK_F)
    mask = row_ok[:, None] & (f[None, :] < features)
    px = tl.load(p_ptr + rows * p_sn, mask=row_ok, other=0.0).to(tl.float32)
    py = tl.load(p_ptr + rows * p_sn + p_sd, mask=row_ok, other=0.0).to(tl.float32)
    pz = tl.load(p_ptr + rows * p_sn + 2 * p_sd, mask=row_ok, other=0.0).to(tl.float32)
    width = num_levels * features
    for level in range(num_levels):
        resolution = tl.load(scalings_ptr + level).to(tl.float32)
        sx, sy, sz = px * resolution, py * resolution, pz * resolution
        lx, ly, lz = tl.floor(sx), tl.floor(sy), tl.floor(sz)
        fx, fy, fz = sx - lx, sy - ly, sz - lz
        ix, iy, iz = lx.to(tl.int64), ly.to(tl.int64), lz.to(tl.int64)
        slots = table_ptr + tl.cast(level, tl.int64) * table_size * features
        acc = tl.zeros((BLOCK, BLOCK_F), dtype=tl.float32)
        for corner in tl.static_range(8):
            bx = corner & 1  # constexpr, as corner is
            by = (corner >> 1) & 1
            bz = (corner >> 2) & 1
            slot = ((ix + bx) ^ ((iy + by) * prime_y) ^ ((iz + bz) * prime_z)) & (table_size - 1)
            weight = ((fx if bx else 1.0 - fx) * (fy if by else 1.0 - fy)) * (fz if bz else 1.0 - fz)
            value = tl.load(slots + slot[:, None] * features + f[None, :], mask=mask, other=0.0).to(tl.float32)
            acc += weight[:, None] * value
        out = out_ptr + rows[:, None] * width + level * features + f[None, :]
        tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=mask)


class HashEncoding(_eager.HashEncoding):
    def forward(self, in_tensor: torch.Tensor) -> torch.Tensor:
        points = in_tensor.reshape(-1, 3)
        n_points = points.shape[0]
        width = self.num_levels * self.features_per_level
        out = torch.empty((n_points, width), dtype=self.hash_table.dtype, device=in_tensor.device)
        if n_points:
            table = self.hash_table.contiguous()
            block = 128
            _hash_grid_kernel[(triton.cdiv(n_points, block),)](
                points, self.scalings, table, out, n_points, self.num_levels, self.hash_table_size,
                self.features_per_level, points.stride(0), points.stride(1), _eager.PRIMES[1], _eager.PRIMES[2],
                BLOCK=block,
                BLOCK_F=triton.next_power_of_2(self.features_per_level), num_warps=4)
        return out.reshape(*in_tensor.shape[:-1], width)

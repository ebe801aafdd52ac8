"""DLRM's dot-product feature interaction as one Triton kernel.

torchrec's InteractionArch concatenates the dense and sparse features (a copy), runs a batched GEMM of tiny
(F + 1) x D matrices that writes the whole (F + 1)^2 Gram matrix, gathers its upper triangle and concatenates the
dense features in front: four kernels and three round trips. Here one program owns one sample: it reads the
dense row and the F sparse rows once into one zero-padded tile, forms their Gram matrix with one tl.dot (fp32
accumulation; bf16 x bf16 products are exact), and writes the dense features and the i < j dots straight into
their places in the output row (torch.triu_indices order), rounded once.
fp32 inputs use IEEE fp32 dots (no TF32), so the float32 path matches the oracle to fp32 precision. Under Triton's
CPU interpreter (TRITON_INTERPRET=1, the tests) the tile is upcast to fp32 before tl.dot: the interpreter's bf16 dot
returns garbage (Triton 3.9).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/dlrm_dot_interaction/interaction.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_dlrm_dot_interaction", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _interaction_kernel(dense_ptr, sparse_ptr, out_ptr, features, dim, d_sb, d_sd, s_sb, s_sf, s_sd,
                        IEEE: tl.constexpr, UPCAST: tl.constexpr, BLOCK_F: tl.constexpr, BLOCK_D: tl.constexpr):
    sample = tl.program_id(0).to(tl.int64)
    vectors = features + 1
    width = dim + features * vectors // 2
    r = tl.arange(0, BLOCK_F)  # vector 0 is the dense row, 1..features the sparse ones
    d = tl.arange(0, BLOCK_D)
    d_ok = d < dim
    dense = tl.load(dense_ptr + sample * d_sb + d * d_sd, mask=d_ok, other=0.0)
    sparse_mask = (r[:, None] >= 1) & (r[:, None] < vectors) & d_ok[None, :]
    tile = tl.load(sparse_ptr + sample * s_sb + (r[:, None] - 1) * s_sf + d[None, :] * s_sd, mask=sparse_mask,
                   other=0.0)
    tile = tl.where(r[:, None] == 0, dense[None, :], tile)
    if UPCAST:
        tile = tile.to(tl.float32)
    if IEEE:
        gram = tl.dot(tile, tl.trans(tile), input_precision="ieee")
    else:
        gram = tl.dot(tile, tl.trans(tile))
    row = out_ptr + sample * width
    tl.store(row + d, dense.to(out_ptr.dtype.element_ty), mask=d_ok)
    i = r[:, None]
    j = r[None, :]
    pair = i * (2 * vectors - i - 1) // 2 + (j - i - 1)  # the pair's place in triu_indices(offset=1) order
    tl.store(row + dim + pair, gram.to(out_ptr.dtype.element_ty), mask=(i < j) & (j < vectors))


class InteractionArch(_eager.InteractionArch):
    def forward(self, dense_features: torch.Tensor, sparse_features: torch.Tensor) -> torch.Tensor:
        batch, dim = dense_features.shape
        features = self.F
        out = torch.empty((batch, dim + features * (features + 1) // 2), dtype=dense_features.dtype,
                          device=dense_features.device)
        if batch:
            _interaction_kernel[(batch,)](
                dense_features, sparse_features, out, features, dim, dense_features.stride(0),
                dense_features.stride(1), sparse_features.stride(0), sparse_features.stride(1),
                sparse_features.stride(2), IEEE=dense_features.dtype == torch.float32, UPCAST=INTERPRETED,
                BLOCK_F=max(16, triton.next_power_of_2(features + 1)), BLOCK_D=max(16, triton.next_power_of_2(dim)),
                num_warps=4)
        return out

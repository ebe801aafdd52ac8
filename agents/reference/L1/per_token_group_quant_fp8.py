"""Per-token-group fp8 (e4m3) quantization as a hand-written Triton kernel.

Each program quantizes GROUPS_PER_PROGRAM consecutive groups of one row as a [groups, group_size] tile: one read of
x, the group absmax reduced in registers, the scale (UE8M0: rounded up to a power of two) stored in fp32, then
q = clamp(x / scale) stored as float8_e4m3fn. Several groups per program keep loads wide for group_size 128 on
short rows and long ones alike.

The fp32 -> e4m3 rounding (to nearest, ties to even) is written out on the bits and stored as uint8: on a GPU it
costs a few integer ops in a memory-bound kernel, and it is exact in Triton's CPU interpreter too, whose own fp8
cast rounds ties away from zero and drops the carry into the exponent.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0
MIN_SCALE = 1.0 / (FP8_MAX * 512.0)


@triton.jit
def _e4m3_bits(v):
    """float8_e4m3fn bits of fp32 values already clamped to [-448, 448], rounded to nearest even."""
    bits = v.to(tl.uint32, bitcast=True)
    sign = (bits >> 31) << 7
    a = bits & 0x7FFFFFFF
    # normal range (|v| >= 2^-6): round the 23-bit mantissa to 3 bits; a carry moves into the exponent by itself
    rounded = (a + 0x7FFFF + ((a >> 20) & 1)) >> 20
    normal = rounded - (120 << 3)  # rebias the exponent from 127 to 7
    # subnormal range: the value in units of 2^-9 (0..8), from the mantissa with its implicit bit
    full = (a & 0x7FFFFF) | 0x800000
    shift = tl.minimum(14 - ((a >> 23).to(tl.int32) - 127), 31).to(tl.uint32)
    sub = (full + (1 << (shift - 1)) - 1 + ((full >> shift) & 1)) >> shift
    return (tl.where(a >= 0x3C800000, normal, sub) | sign).to(tl.uint8)


@triton.jit
def _group_quant_kernel(x_ptr, q_ptr, s_ptr, n_groups, x_row_stride, hidden,
                        GROUP: tl.constexpr, GROUPS_PER_PROGRAM: tl.constexpr, UE8M0: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1) * GROUPS_PER_PROGRAM + tl.arange(0, GROUPS_PER_PROGRAM)
    c = tl.arange(0, GROUP)
    gmask = g < n_groups
    mask = gmask[:, None]
    cols = g[:, None] * GROUP + c[None, :]
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.where(gmask, tl.max(tl.abs(x), axis=1), 448.0) / 448.0  # groups past the row: 1, not log2(0)
    if UE8M0:
        scale = tl.exp2(tl.ceil(tl.log2(scale)))
    scale = tl.maximum(scale, 1.0 / (448.0 * 512.0))
    q = tl.clamp(x / scale[:, None], -448.0, 448.0)
    tl.store(q_ptr + row * hidden + cols, _e4m3_bits(q), mask=mask)
    tl.store(s_ptr + row * n_groups + g, scale, mask=gmask)


class PerTokenGroupQuantFP8(nn.Module):
    def __init__(self, group_size: int = 128, use_ue8m0: bool = False) -> None:
        super().__init__()
        self.group_size = group_size
        self.use_ue8m0 = use_ue8m0

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = x.shape[-1]
        n_groups = hidden // self.group_size
        x2 = x.reshape(-1, hidden)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        q = torch.empty(x.shape, dtype=FP8, device=x.device)
        scales = torch.empty(*x.shape[:-1], n_groups, dtype=torch.float32, device=x.device)
        rows = x2.shape[0]
        if rows > 0 and n_groups > 0:
            per_program = min(triton.next_power_of_2(n_groups), max(1, 1024 // self.group_size))
            grid = (rows, triton.cdiv(n_groups, per_program))
            _group_quant_kernel[grid](x2, q.view(torch.uint8), scales, n_groups, x2.stride(0), hidden,
                                      GROUP=self.group_size, GROUPS_PER_PROGRAM=per_program, UE8M0=self.use_ue8m0,
                                      num_warps=4)
        return q, scales

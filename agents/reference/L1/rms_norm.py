"""RMSNorm (optionally fused with the residual add) as hand-written Triton kernels.

One program per row. Rows up to MAX_FUSED elements stay in registers, so x, residual and weight are read once and
out (and h) written once; wider rows take a two-pass looped kernel. All math is fp32; each output is rounded once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

MAX_FUSED = 16384  # widest row kept in registers; beyond it registers spill, so loop over the row instead
LOOP_BLOCK = 4096


@triton.jit
def _rms_norm_row_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, x_stride, r_stride, n_cols, eps,
                         HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        h += tl.load(r_ptr + row * r_stride + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + row * n_cols + cols, h.to(h_ptr.dtype.element_ty), mask=mask)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n_cols + cols, (h * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_norm_looped_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, x_stride, r_stride, n_cols, eps,
                            HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    """Pass 1 sums h^2 (and writes h); pass 2 re-reads x and residual, so h stays fp32 and is rounded once."""
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            h += tl.load(r_ptr + row * r_stride + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(h_ptr + row * n_cols + cols, h.to(h_ptr.dtype.element_ty), mask=mask)
        acc += h * h
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            h += tl.load(r_ptr + row * r_stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (h * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def _rows(t: torch.Tensor, n: int) -> torch.Tensor:
    """A [rows, n] view with unit column stride (copying only when the last dim is strided)."""
    t2 = t.reshape(-1, n)
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def _num_warps(block: int) -> int:
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.variance_epsilon = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        n = x.shape[-1]
        x2 = _rows(x, n)
        r2 = _rows(residual, n) if residual is not None else x2
        w = self.weight if self.weight.is_contiguous() else self.weight.contiguous()
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        h = torch.empty(x.shape, dtype=x.dtype, device=x.device) if residual is not None else out
        if x2.shape[0] > 0 and n > 0:
            block = triton.next_power_of_2(n)
            kernel = _rms_norm_row_kernel
            if block > MAX_FUSED:
                block, kernel = LOOP_BLOCK, _rms_norm_looped_kernel
            kernel[(x2.shape[0],)](x2, r2, w, out, h, x2.stride(0), r2.stride(0), n, self.variance_epsilon,
                                   HAS_RESIDUAL=residual is not None, BLOCK=block, num_warps=_num_warps(block))
        return out if residual is None else (out, h)

"""Global Response Normalization (ConvNeXtV2) as two hand-written Triton kernels, channels last.

Pass 1: one program per (image, block of channels) walks the image's rows and accumulates sum(x^2) per channel in
fp32. Between the passes, torch turns the [batch, dim] sums into n = g / (mean_c g + eps) (a tiny tensor). Pass 2:
a 2-D grid over (rows, channel blocks) writes x + weight * x * n + bias in fp32, rounded once. x is read twice and
the output written once, against timm's five bf16 kernels.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/global_response_norm/global_response_norm.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_global_response_norm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _sum_squares_kernel(x_ptr, out_ptr, hw, dim, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    image = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < dim
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    base = x_ptr + image * hw * dim
    for start in range(0, hw, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < hw) & cmask[None, :]
        x = tl.load(base + rows[:, None] * dim + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        acc += x * x
    tl.store(out_ptr + image * dim + cols, tl.sum(acc, axis=0), mask=cmask)


@triton.jit
def _apply_kernel(x_ptr, n_ptr, w_ptr, b_ptr, out_ptr, n_rows, hw, dim, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)  # flat (image, pixel) rows
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    image = rows // hw
    cmask = cols < dim
    mask = (rows[:, None] < n_rows) & cmask[None, :]
    offs = rows[:, None] * dim + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    n = tl.load(n_ptr + image[:, None] * dim + cols[None, :], mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + offs, (x + w * (x * n) + b).to(out_ptr.dtype.element_ty), mask=mask)


class GlobalResponseNorm(_eager.GlobalResponseNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.channels_last:
            # NCHW is the same computation on the NHWC view of the data.
            out = self._channels_last(x.permute(0, 2, 3, 1))
            return out.permute(0, 3, 1, 2)
        return self._channels_last(x)

    def _channels_last(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        batch, height, width, dim = x.shape
        hw = height * width
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        sums = torch.empty((batch, dim), dtype=torch.float32, device=x.device)
        block_c = min(128, triton.next_power_of_2(dim))
        _sum_squares_kernel[(batch, triton.cdiv(dim, block_c))](x, sums, hw, dim, BLOCK_R=32, BLOCK_C=block_c)
        g = sums.sqrt()
        n = g / (g.mean(dim=-1, keepdim=True) + self.eps)
        block_r = 16
        grid = (triton.cdiv(batch * hw, block_r), triton.cdiv(dim, block_c))
        _apply_kernel[grid](x, n, self.weight, self.bias, out, batch * hw, hw, dim, BLOCK_R=block_r, BLOCK_C=block_c)
        return out

"""Depthwise causal conv1d (+ bias, + SiLU) as one Triton kernel over [batch, dim, seqlen].

Each program owns a [BLOCK_D channels x BLOCK_T steps] tile: it reads the width taps of x it needs (the tile plus
width - 1 steps of history, zeros before t = 0) straight from x's strides, so transposed or sliced views (the Mamba
mixer hands over a half of in_proj's output) cost no copy, accumulates in fp32, adds the bias, applies SiLU and
rounds once on the store.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module, which owns the constructor and the parameters (same state dict). Loaded by path
    with importlib: a candidate may not import the harness (fastkernels)."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/causal_conv1d/causal_conv1d.py"
    spec = importlib.util.spec_from_file_location("_reference_causal_conv1d_eager", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()

BLOCK_D = 16
BLOCK_T = 128


@triton.jit
def _causal_conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, dim, seqlen, stride_xb, stride_xd, stride_xt,
                          WIDTH: tl.constexpr, HAS_BIAS: tl.constexpr, SILU: tl.constexpr,
                          BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr):
    batch = tl.program_id(0).to(tl.int64)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    t = tl.program_id(2) * BLOCK_T + tl.arange(0, BLOCK_T)
    d_ok = d < dim
    acc = tl.zeros([BLOCK_D, BLOCK_T], dtype=tl.float32)
    x_row = x_ptr + batch * stride_xb + d[:, None].to(tl.int64) * stride_xd
    for k in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + k
        ok = d_ok[:, None] & ((src >= 0) & (src < seqlen))[None, :]
        xv = tl.load(x_row + src[None, :].to(tl.int64) * stride_xt, mask=ok, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + d * WIDTH + k, mask=d_ok, other=0.0).to(tl.float32)
        acc += wv[:, None] * xv
    if HAS_BIAS:
        acc += tl.load(b_ptr + d, mask=d_ok, other=0.0).to(tl.float32)[:, None]
    if SILU:
        acc = acc * tl.sigmoid(acc)
    out = out_ptr + (batch * dim + d[:, None].to(tl.int64)) * seqlen + t[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=d_ok[:, None] & (t < seqlen)[None, :])


def causal_conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, silu: bool) -> torch.Tensor:
    """out[b, d, t] = silu?(bias[d] + sum_k weight[d, k] x[b, d, t - width + 1 + k]) for x [batch, dim, seqlen]."""
    batch, dim, seqlen = x.shape
    out = torch.empty((batch, dim, seqlen), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    weight = weight.contiguous()
    grid = (batch, triton.cdiv(dim, BLOCK_D), triton.cdiv(seqlen, BLOCK_T))
    _causal_conv1d_kernel[grid](x, weight, bias if bias is not None else weight, out, dim, seqlen,  # dummy bias
                                x.stride(0), x.stride(1), x.stride(2), WIDTH=weight.shape[1],
                                HAS_BIAS=bias is not None, SILU=silu, BLOCK_D=BLOCK_D, BLOCK_T=BLOCK_T, num_warps=4)
    return out


class CausalConv1d(_eager.CausalConv1d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return causal_conv1d(x, self.weight, self.bias, self.activation is not None)

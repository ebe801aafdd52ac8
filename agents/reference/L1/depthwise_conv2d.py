"""Depthwise 2-D convolution as one direct Triton kernel on NCHW, no layout change.

cuDNN's bf16 depthwise kernels have no tensor-core path and the channels-last production route pays an NCHW ->
NHWC copy of x every call. The work is memory bound (k*k multiply-adds a pixel), so here one program owns a tile of
one (image, channel) output plane: for each of the k*k taps (unrolled) it loads the shifted input tile, masked to
zero outside the image (the zero padding), and accumulates tap * weight in fp32; the taps re-read the same few rows,
which stay in L1, so x is read from memory about once and the output written once, bias added, rounded once.
Any input strides are read in place.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/depthwise_conv2d/depthwise_conv2d.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_depthwise_conv2d", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _depthwise_kernel(x_ptr, w_ptr, b_ptr, o_ptr, channels, height, width, out_h, out_w, tiles_w,
                      x_sb, x_sc, x_sh, x_sw, stride, padding, KERNEL: tl.constexpr, HAS_BIAS: tl.constexpr,
                      BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # image * channels + channel
    tile = tl.program_id(1)
    image = plane // channels
    channel = plane % channels
    oh = (tile // tiles_w) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = (tile % tiles_w) * BLOCK_W + tl.arange(0, BLOCK_W)
    out_mask = (oh[:, None] < out_h) & (ow[None, :] < out_w)
    base = x_ptr + image * x_sb + channel * x_sc
    acc = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
    for i in tl.static_range(KERNEL):
        ih = oh * stride - padding + i
        row_ok = (ih >= 0) & (ih < height)
        for j in tl.static_range(KERNEL):
            iw = ow * stride - padding + j
            mask = out_mask & row_ok[:, None] & ((iw >= 0) & (iw < width))[None, :]
            x = tl.load(base + ih[:, None] * x_sh + iw[None, :] * x_sw, mask=mask, other=0.0)
            tap = tl.load(w_ptr + channel * KERNEL * KERNEL + i * KERNEL + j).to(tl.float32)
            acc += x.to(tl.float32) * tap
    if HAS_BIAS:
        acc += tl.load(b_ptr + channel).to(tl.float32)
    o = o_ptr + plane * out_h * out_w + oh[:, None] * out_w + ow[None, :]
    tl.store(o, acc.to(o_ptr.dtype.element_ty), mask=out_mask)


class DepthwiseConv2d(_eager.DepthwiseConv2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, height, width = x.shape
        k, s, p = self.kernel_size, self.stride, self.padding
        out_h = (height + 2 * p - k) // s + 1
        out_w = (width + 2 * p - k) // s + 1
        out = torch.empty((batch, channels, max(out_h, 0), max(out_w, 0)), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        block_w = min(64, triton.next_power_of_2(out_w))
        block_h = min(triton.next_power_of_2(out_h), max(1, 2048 // block_w))
        tiles_w = triton.cdiv(out_w, block_w)
        grid = (batch * channels, triton.cdiv(out_h, block_h) * tiles_w)
        weight = self.weight.contiguous()
        bias = self.bias if self.bias is not None else weight  # unread when HAS_BIAS is False
        elements = block_h * block_w
        _depthwise_kernel[grid](
            x, weight, bias, out, channels, height, width, out_h, out_w, tiles_w,
            x.stride(0), x.stride(1), x.stride(2), x.stride(3), s, p, KERNEL=k, HAS_BIAS=self.bias is not None,
            BLOCK_H=block_h, BLOCK_W=block_w, num_warps=4 if elements >= 1024 else (2 if elements >= 256 else 1))
        return out

"""GroupNorm on NCHW activations as three Triton kernels, split so that even a few huge groups fill the GPU.

A (sample, group) is one contiguous run of (channels / groups) * height * width elements. Kernel 1 cuts every run
into chunks and stores each chunk's mean and centred sum of squares (M2). Kernel 2, one program per group, merges
them with Chan's parallel formula (numerically safe, unlike E[x^2] - E[x]^2) into the group's mean and 1/std.
Kernel 3 normalises every chunk and applies the per-channel weight and bias. Statistics in fp32; x is read twice,
the output written once.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks" / "L1" / "group_norm" / "group_norm.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_group_norm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()
MIN_CHUNK = 2048
MAX_CHUNKS = 4096  # chunks per group; kernel 2 loads all of a group's partial statistics at once


@triton.jit
def _chunk_stats_kernel(x_ptr, mean_ptr, m2_ptr, group_size, num_chunks, CHUNK: tl.constexpr):
    group = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    offs = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = offs < group_size
    x = tl.load(x_ptr + group * group_size + offs, mask=mask, other=0.0).to(tl.float32)
    count = tl.minimum(group_size - chunk * CHUNK, CHUNK).to(tl.float32)
    mean = tl.sum(x, axis=0) / count
    d = tl.where(mask, x - mean, 0.0)
    tl.store(mean_ptr + group * num_chunks + chunk, mean)
    tl.store(m2_ptr + group * num_chunks + chunk, tl.sum(d * d, axis=0))


@triton.jit
def _merge_kernel(mean_ptr, m2_ptr, stats_ptr, group_size, num_chunks, eps, CHUNK: tl.constexpr,
                  BLOCK_CHUNKS: tl.constexpr):
    """Chan et al.: mean = sum(n_c * mean_c) / n, M2 = sum(M2_c + n_c * (mean_c - mean)^2); stores (mean, rstd)."""
    group = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK_CHUNKS)
    cmask = c < num_chunks
    counts = tl.where(cmask, tl.minimum(group_size - c * CHUNK, CHUNK), 0).to(tl.float32)
    means = tl.load(mean_ptr + group * num_chunks + c, mask=cmask, other=0.0)
    m2s = tl.load(m2_ptr + group * num_chunks + c, mask=cmask, other=0.0)
    mean = tl.sum(counts * means, axis=0) / group_size
    dm = tl.where(cmask, means - mean, 0.0)
    var = tl.sum(m2s + counts * dm * dm, axis=0) / group_size
    tl.store(stats_ptr + 2 * group, mean)
    tl.store(stats_ptr + 2 * group + 1, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _normalize_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stats_ptr, group_size, num_groups, channels_per_group, spatial,
                      HAS_AFFINE: tl.constexpr, CHUNK: tl.constexpr):
    group = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    mean = tl.load(stats_ptr + 2 * group)
    rstd = tl.load(stats_ptr + 2 * group + 1)
    offs = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = offs < group_size
    x = tl.load(x_ptr + group * group_size + offs, mask=mask, other=0.0).to(tl.float32)
    y = (x - mean) * rstd
    if HAS_AFFINE:
        channel = (group % num_groups) * channels_per_group + offs // spatial
        w = tl.load(w_ptr + channel, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + channel, mask=mask, other=0.0).to(tl.float32)
        y = y * w + b
    tl.store(out_ptr + group * group_size + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def group_norm(x: torch.Tensor, num_groups: int, weight: torch.Tensor | None, bias: torch.Tensor | None,
               eps: float, chunk: int | None = None) -> torch.Tensor:
    """F.group_norm(x, num_groups, weight, bias, eps); `chunk` (a power of two) overrides the chunk size."""
    x = x.contiguous()
    out = torch.empty_like(x)
    batch, channels = x.shape[0], x.shape[1]
    spatial = x[0, 0].numel()
    group_size = channels // num_groups * spatial
    if x.numel() == 0:
        return out
    if chunk is None:
        chunk = max(MIN_CHUNK, triton.next_power_of_2(triton.cdiv(group_size, MAX_CHUNKS)))
        chunk = min(chunk, triton.next_power_of_2(group_size))
    num_chunks = triton.cdiv(group_size, chunk)
    mean = torch.empty(batch * num_groups, num_chunks, dtype=torch.float32, device=x.device)
    m2 = torch.empty_like(mean)
    grid = (batch * num_groups, num_chunks)
    warps = 4 if chunk <= 2048 else 8
    _chunk_stats_kernel[grid](x, mean, m2, group_size, num_chunks, CHUNK=chunk, num_warps=warps)
    stats = torch.empty(batch * num_groups, 2, dtype=torch.float32, device=x.device)
    block_chunks = triton.next_power_of_2(num_chunks)
    _merge_kernel[(batch * num_groups,)](mean, m2, stats, group_size, num_chunks, eps, CHUNK=chunk,
                                         BLOCK_CHUNKS=block_chunks, num_warps=4 if block_chunks <= 1024 else 8)
    affine = weight is not None
    _normalize_kernel[grid](x, weight if affine else x, bias if affine else x, out, stats, group_size, num_groups,
                            channels // num_groups, spatial, HAS_AFFINE=affine, CHUNK=chunk, num_warps=warps)
    return out


class GroupNorm(_eager.GroupNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

"""M-RoPE (Qwen2-VL / Qwen3-VL multimodal rotary embedding) as one hand-written Triton kernel.

One program per token rotates every head of q and then of k in place. Each of the rotary_dim / 2 frequency channels
picks its position stream (t, h or w) from mrope_section, chunked or interleaved, computed from the channel index
in registers; cos and sin are gathered from the module's fp32 cos/sin table at that position, so the angles are
exactly the task's. The rotation is fp32 and each output is rounded once; channels past rotary_dim are untouched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/mrope/mrope.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_mrope", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _rotate_heads(x_ptr, n_heads, cos, sin, head_size: tl.constexpr, half: tl.constexpr,
                  NEOX: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    heads = tl.arange(0, BLOCK_H)[:, None]
    chans = tl.arange(0, BLOCK_D)[None, :]
    mask = (heads < n_heads) & (chans < half)
    base = x_ptr + heads * head_size
    if NEOX:
        off1 = chans
        off2 = chans + half
    else:
        off1 = 2 * chans
        off2 = 2 * chans + 1
    x1 = tl.load(base + off1, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(base + off2, mask=mask, other=0.0).to(tl.float32)
    tl.store(base + off1, (x1 * cos - x2 * sin).to(x_ptr.dtype.element_ty), mask=mask)
    tl.store(base + off2, (x2 * cos + x1 * sin).to(x_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mrope_kernel(pos_ptr, pos_stride, table_ptr, table_stride, q_ptr, q_stride, k_ptr, k_stride, n_q_heads,
                  n_k_heads, head_size: tl.constexpr, half: tl.constexpr, sec_t: tl.constexpr,
                  sec_h: tl.constexpr, sec_w: tl.constexpr, INTERLEAVED: tl.constexpr, NEOX: tl.constexpr,
                  BLOCK_HQ: tl.constexpr, BLOCK_HK: tl.constexpr, BLOCK_D: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    chans = tl.arange(0, BLOCK_D)
    if INTERLEAVED:
        stream = tl.where((chans % 3 == 1) & (chans < 3 * sec_h), 1,
                          tl.where((chans % 3 == 2) & (chans < 3 * sec_w), 2, 0))
    else:
        stream = (chans >= sec_t).to(tl.int32) + (chans >= sec_t + sec_h).to(tl.int32)
    p_t = tl.load(pos_ptr + token)
    p_h = tl.load(pos_ptr + pos_stride + token)
    p_w = tl.load(pos_ptr + 2 * pos_stride + token)
    pos = tl.where(stream == 1, p_h, tl.where(stream == 2, p_w, p_t))
    cmask = chans < half
    row = table_ptr + pos * table_stride
    cos = tl.load(row + chans, mask=cmask, other=1.0)[None, :]
    sin = tl.load(row + half + chans, mask=cmask, other=0.0)[None, :]
    _rotate_heads(q_ptr + token * q_stride, n_q_heads, cos, sin, head_size, half, NEOX, BLOCK_HQ, BLOCK_D)
    _rotate_heads(k_ptr + token * k_stride, n_k_heads, cos, sin, head_size, half, NEOX, BLOCK_HK, BLOCK_D)


def _rows(x: torch.Tensor, width: int) -> torch.Tensor:
    """A [tokens, width] view the kernel can write in place (unit stride within a row), copying only if needed."""
    rows = x.view(x.shape[0], width) if x.is_contiguous() else x.reshape(x.shape[0], width)
    return rows if rows.stride(-1) == 1 else rows.contiguous()


class MRotaryEmbedding(_eager.MRotaryEmbedding):
    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        tokens = positions.shape[-1]
        q, k = _rows(query, query.shape[-1]), _rows(key, key.shape[-1])
        n_q, n_k = q.shape[1] // self.head_size, k.shape[1] // self.head_size
        table = self.cos_sin_cache if self.cos_sin_cache.dtype == torch.float32 else self.cos_sin_cache.float()
        pos = positions if positions.is_contiguous() else positions.contiguous()
        half = self.rotary_dim // 2
        if tokens > 0:
            t, h, w = self.mrope_section
            _mrope_kernel[(tokens,)](
                pos, pos.stride(0), table, table.stride(0), q, q.stride(0), k, k.stride(0), n_q, n_k,
                self.head_size, half, t, h, w, self.mrope_interleaved, self.is_neox_style,
                triton.next_power_of_2(n_q), triton.next_power_of_2(n_k), triton.next_power_of_2(half),
                num_warps=4,
            )
        return q.view(query.shape), k.view(key.shape)

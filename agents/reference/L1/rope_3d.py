"""V-JEPA 2's 3-D rotary embedding of q and k as one Triton kernel.

transformers runs three rotate_queries_or_keys calls per tensor (angle table, repeat, unflatten, stack, two
multiplies, an add, then a cat): about twenty kernels and as many round trips of q and k through memory. Here one
program owns one token of one clip: it derives the token's (frame, row, column) from its id, computes every
channel's angle in fp32 registers (channel j of a segment of d channels uses angle index j mod d/2, V-JEPA 2's
repeated-angle pairing), reads each channel and its pair partner (j xor 1), and writes q and k once.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks" / "L1" / "rope_3d" / "rope_3d.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_rope_3d", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _rotate(x_ptr, o_ptr, x_sb, x_sn, x_sh, b, n, tokens, heads, head_dim, h, j, partner, rotated, cos, sin, sign):
    mask = (h < heads) & (j < head_dim)
    base = x_ptr + b * x_sb + n * x_sn + h * x_sh
    x = tl.load(base + j, mask=mask, other=0.0).to(tl.float32)
    xp = tl.load(base + partner, mask=mask & rotated, other=0.0).to(tl.float32)
    out = tl.where(rotated, x * cos + sign * xp * sin, x)
    o = o_ptr + ((b * tokens + n) * heads + h) * head_dim + j
    tl.store(o, out.to(o_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rope_3d_kernel(q_ptr, k_ptr, qo_ptr, ko_ptr, ids_ptr, q_sb, q_sn, q_sh, k_sb, k_sn, k_sh, tokens, heads,
                    head_dim, axis_dim, grid_size, log2_theta, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    b = pid // tokens
    n = pid % tokens
    token_id = tl.load(ids_ptr + n)
    per_frame = grid_size * grid_size
    frame = token_id // per_frame
    within = token_id - frame * per_frame
    row = within // grid_size
    col = within - row * grid_size
    h = tl.arange(0, BLOCK_H)[:, None]
    j = tl.arange(0, BLOCK_D)[None, :]
    segment = j // axis_dim
    rotated = segment < 3
    half = axis_dim // 2
    pos = tl.where(segment == 0, frame, tl.where(segment == 1, row, col)).to(tl.float32)
    i = ((j - segment * axis_dim) % half).to(tl.float32)
    angle = pos * tl.exp2(-log2_theta * i / half)
    cos, sin = tl.cos(angle), tl.sin(angle)
    partner = j ^ 1
    sign = tl.where(j % 2 == 0, -1.0, 1.0)  # y = (-x1, x0, -x3, x2, ...)
    _rotate(q_ptr, qo_ptr, q_sb, q_sn, q_sh, b, n, tokens, heads, head_dim, h, j, partner, rotated, cos, sin, sign)
    _rotate(k_ptr, ko_ptr, k_sb, k_sn, k_sh, b, n, tokens, heads, head_dim, h, j, partner, rotated, cos, sin, sign)


def _unit_last_stride(t: torch.Tensor) -> torch.Tensor:
    return t if t.stride(-1) == 1 else t.contiguous()


class VJEPA2RotaryEmbedding3D(_eager.VJEPA2RotaryEmbedding3D):
    def forward(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        q, k = _unit_last_stride(q), _unit_last_stride(k)
        batch, tokens, heads, head_dim = q.shape
        q_out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        k_out = torch.empty(k.shape, dtype=k.dtype, device=k.device)
        if q.numel() == 0:
            return q_out, k_out
        if self.axis_dim == 0:  # head_dim < 6: nothing is rotated
            return q_out.copy_(q), k_out.copy_(k)
        _rope_3d_kernel[(batch * tokens,)](
            q, k, q_out, k_out, position_ids.contiguous(), q.stride(0), q.stride(1), q.stride(2), k.stride(0),
            k.stride(1), k.stride(2), tokens, heads, head_dim, self.axis_dim, self.grid_size,
            math.log2(_eager.THETA), BLOCK_H=triton.next_power_of_2(heads),
            BLOCK_D=triton.next_power_of_2(head_dim), num_warps=4)
        return q_out, k_out

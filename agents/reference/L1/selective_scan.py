"""Mamba-1's selective scan as one Triton kernel: the recurrence runs in registers.

One program owns BLOCK_D channels of one sequence and all their dstate states: it walks the sequence once, reading
u, delta, z and the step's B and C once per step, keeps h [BLOCK_D, dstate] in fp32 registers, and writes y once
(plus the last state at the end). Nothing of size seqlen x dstate ever touches memory, which is what the PyTorch
path (a materialised state history) pays for. softplus is computed as max(x, 0) + log1p(exp(-|x|)) with a series
for the log1p of tiny arguments, so small dt keep their relative precision.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module, which owns the constructor (same interface). Loaded by path with importlib: a
    candidate may not import the harness (fastkernels)."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/selective_scan/selective_scan.py"
    spec = importlib.util.spec_from_file_location("_reference_selective_scan_eager", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()

BLOCK_D = 32


@triton.jit
def _softplus(x):
    e = tl.exp(-tl.abs(x))
    log1p = tl.where(e < 1e-3, e * (1.0 - e * (0.5 - e / 3.0)), tl.log(1.0 + e))
    return tl.maximum(x, 0.0) + log1p


@triton.jit
def _selective_scan_kernel(u_ptr, dt_ptr, a_ptr, b_ptr, c_ptr, d_ptr, z_ptr, bias_ptr, y_ptr, last_ptr,
                           dim, dstate, seqlen,
                           su_b, su_d, su_t, sdt_b, sdt_d, sdt_t, sb_b, sb_n, sb_t, sc_b, sc_n, sc_t,
                           sz_b, sz_d, sz_t,
                           HAS_D: tl.constexpr, HAS_Z: tl.constexpr, HAS_BIAS: tl.constexpr, SOFTPLUS: tl.constexpr,
                           BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr):
    batch = tl.program_id(0).to(tl.int64)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    n = tl.arange(0, BLOCK_N)
    d_ok, n_ok = d < dim, n < dstate
    A = tl.load(a_ptr + d[:, None] * dstate + n[None, :], mask=d_ok[:, None] & n_ok[None, :], other=0.0).to(tl.float32)
    if HAS_D:
        D = tl.load(d_ptr + d, mask=d_ok, other=0.0).to(tl.float32)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + d, mask=d_ok, other=0.0).to(tl.float32)
    h = tl.zeros([BLOCK_D, BLOCK_N], dtype=tl.float32)
    for t in range(seqlen):
        u = tl.load(u_ptr + batch * su_b + d * su_d + t * su_t, mask=d_ok, other=0.0).to(tl.float32)
        dt = tl.load(dt_ptr + batch * sdt_b + d * sdt_d + t * sdt_t, mask=d_ok, other=0.0).to(tl.float32)
        if HAS_BIAS:
            dt += bias
        if SOFTPLUS:
            dt = _softplus(dt)
        B = tl.load(b_ptr + batch * sb_b + n * sb_n + t * sb_t, mask=n_ok, other=0.0).to(tl.float32)
        C = tl.load(c_ptr + batch * sc_b + n * sc_n + t * sc_t, mask=n_ok, other=0.0).to(tl.float32)
        h = tl.exp(dt[:, None] * A) * h + (dt * u)[:, None] * B[None, :]
        y = tl.sum(h * C[None, :], axis=1)
        if HAS_D:
            y += D * u
        if HAS_Z:
            z = tl.load(z_ptr + batch * sz_b + d * sz_d + t * sz_t, mask=d_ok, other=0.0).to(tl.float32)
            y = y * (z * tl.sigmoid(z))
        tl.store(y_ptr + (batch * dim + d) * seqlen + t, y.to(y_ptr.dtype.element_ty), mask=d_ok)
    tl.store(last_ptr + (batch * dim + d[:, None]) * dstate + n[None, :], h, mask=d_ok[:, None] & n_ok[None, :])


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus: bool = True):
    """selective_scan_fn(..., return_last_state=True): (y in u's dtype, last state [batch, dim, dstate] in fp32)."""
    batch, dim, seqlen = u.shape
    dstate = A.shape[1]
    y = torch.empty((batch, dim, seqlen), dtype=u.dtype, device=u.device)
    last = torch.zeros((batch, dim, dstate), dtype=torch.float32, device=u.device)
    if y.numel() == 0:
        return y, last
    A = A.contiguous()
    zs = z if z is not None else u  # dummy pointer and strides when there is no gate
    grid = (batch, triton.cdiv(dim, BLOCK_D))
    _selective_scan_kernel[grid](
        u, delta, A, B, C, D if D is not None else A, zs, delta_bias if delta_bias is not None else A, y, last,
        dim, dstate, seqlen, *u.stride(), *delta.stride(), *B.stride(), *C.stride(), *zs.stride(),
        HAS_D=D is not None, HAS_Z=z is not None, HAS_BIAS=delta_bias is not None, SOFTPLUS=delta_softplus,
        BLOCK_D=BLOCK_D, BLOCK_N=triton.next_power_of_2(dstate), num_warps=4,
    )
    return y, last


class SelectiveScan(_eager.SelectiveScan):
    def forward(self, u, delta, A, B, C, D=None, z=None, delta_bias=None):
        return selective_scan(u, delta, A, B, C, D, z, delta_bias, self.delta_softplus)

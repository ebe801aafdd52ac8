"""One decode step of the gated delta rule (L2-normalised q and k) as one Triton kernel.

One program per (sequence, value head, block of BLOCK_V value columns): it normalises its key head's q and k in
registers, reads its [K, BLOCK_V] slice of the cached fp32 state once, applies decay, the delta-rule correction and
the readout in fp32, and writes the new state slice and o once. The state is the only large tensor, so the kernel
moves each byte of it exactly twice (read, write): the memory-bound minimum.
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
    path = Path(__file__).resolve().parents[3] / "tasks/L1/gated_delta_rule_decode/gated_delta_rule_decode.py"
    spec = importlib.util.spec_from_file_location("_reference_gated_delta_rule_decode_eager", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _gdr_decode_kernel(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, s_ptr, o_ptr, out_s_ptr, scale,
                       KH: tl.constexpr, VH: tl.constexpr, DK: tl.constexpr, DV: tl.constexpr,
                       BLOCK_K: tl.constexpr, BLOCK_V: tl.constexpr, L2NORM: tl.constexpr):
    seq_head = tl.program_id(0).to(tl.int64)        # sequence * VH + value head
    seq, head = seq_head // VH, seq_head % VH
    key_head = head // (VH // KH)
    kk = tl.arange(0, BLOCK_K)
    vv = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    k_ok, v_ok = kk < DK, vv < DV
    q = tl.load(q_ptr + (seq * KH + key_head) * DK + kk, mask=k_ok, other=0.0).to(tl.float32)
    k = tl.load(k_ptr + (seq * KH + key_head) * DK + kk, mask=k_ok, other=0.0).to(tl.float32)
    if L2NORM:
        q = q * tl.rsqrt(tl.sum(q * q, axis=0) + 1e-6)
        k = k * tl.rsqrt(tl.sum(k * k, axis=0) + 1e-6)
    q = q * scale
    v = tl.load(v_ptr + seq_head * DV + vv, mask=v_ok, other=0.0).to(tl.float32)
    decay = tl.exp(tl.load(g_ptr + seq_head).to(tl.float32))
    beta = tl.load(beta_ptr + seq_head).to(tl.float32)
    tile = seq_head * DK * DV + kk[:, None] * DV + vv[None, :]
    ok = k_ok[:, None] & v_ok[None, :]
    s = tl.load(s_ptr + tile, mask=ok, other=0.0).to(tl.float32) * decay
    delta = (v - tl.sum(k[:, None] * s, axis=0)) * beta
    s = s + k[:, None] * delta[None, :]
    tl.store(out_s_ptr + tile, s, mask=ok)
    o = tl.sum(q[:, None] * s, axis=0)
    tl.store(o_ptr + seq_head * DV + vv, o.to(o_ptr.dtype.element_ty), mask=v_ok)


class FusedRecurrentGatedDeltaRule(_eager.FusedRecurrentGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state):
        batch, seqlen, key_heads, dk = q.shape
        value_heads, dv = v.shape[2], v.shape[3]
        if seqlen != 1:  # this kernel is the decode step; longer inputs take the task's recurrence
            return super().forward(q, k, v, g, beta, initial_state)
        q, k, v, g, beta = (t.contiguous() for t in (q, k, v, g, beta))
        state = initial_state.contiguous()
        o = torch.empty(v.shape, dtype=q.dtype, device=q.device)
        new_state = torch.empty(state.shape, dtype=torch.float32, device=q.device)
        if o.numel() == 0:
            return o, new_state
        block_k = triton.next_power_of_2(dk)
        block_v = min(triton.next_power_of_2(dv), max(16, 8192 // block_k))  # keep the state tile <= 8k fp32
        grid = (batch * value_heads, triton.cdiv(dv, block_v))
        _gdr_decode_kernel[grid](q, k, v, g, beta, state, o, new_state, dk ** -0.5,
                                 KH=key_heads, VH=value_heads, DK=dk, DV=dv, BLOCK_K=block_k, BLOCK_V=block_v,
                                 L2NORM=self.use_qk_l2norm, num_warps=4)
        return o, new_state

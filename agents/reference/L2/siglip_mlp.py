"""SigLIP's vision MLP (fc2(gelu(fc1(x)))) as two hand-written Triton GEMMs with fused epilogues.

fc1's kernel adds the bias and applies GELU (tanh or erf) to the fp32 accumulator before its single rounding, so the
[tokens, intermediate] activation is written once and never re-read by a separate activation kernel; fc2's kernel
adds its bias in the epilogue. Tiles are grouped along M so neighbouring programs share weight tiles in L2.
fp32 inputs use IEEE fp32 dots (no TF32), so the float32 path matches the oracle to fp32 precision. Under Triton's
CPU interpreter (TRITON_INTERPRET=1, the tests) bf16 tiles are upcast to fp32 before tl.dot: the interpreter's bf16
dot returns garbage (Triton 3.9), and bf16 x bf16 products are exact in fp32, so the result is what a GPU's bf16
tensor-core dot with fp32 accumulation computes.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L2/siglip_mlp/siglip_mlp.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_siglip_mlp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()

ACT_NONE, ACT_GELU_TANH, ACT_GELU_ERF = 0, 1, 2
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _linear_act_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, stride_xm, stride_wn, stride_om,
                       ACT: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        kk = k + rk
        a_mask = (rm[:, None] < M) & (kk[None, :] < K)
        b_mask = (rn[None, :] < N) & (kk[:, None] < K)
        a = tl.load(x_ptr + rm[:, None] * stride_xm + kk[None, :], mask=a_mask, other=0.0)
        b = tl.load(w_ptr + rn[None, :] * stride_wn + kk[:, None], mask=b_mask, other=0.0)  # W^T tile
        if UPCAST:
            a, b = a.to(tl.float32), b.to(tl.float32)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if ACT == 1:
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0))  # tanh(z) = 2 sigmoid(2z) - 1
    elif ACT == 2:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], acc.to(out_ptr.dtype.element_ty), mask=mask)


def linear_act(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, act: int) -> torch.Tensor:
    """act(x @ weight.T + bias) for x [M, K] (unit column stride), weight [N, K], bias [N]."""
    M, K = x.shape
    N = weight.shape[0]
    w = weight if weight.stride(-1) == 1 else weight.contiguous()
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if M == 0:
        return out
    block_m = 64 if M <= 64 else 128
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, 128),)
    _linear_act_kernel[grid](x, w, bias, out, M, N, K, x.stride(0), w.stride(0), out.stride(0), ACT=act,
                             IEEE=x.dtype == torch.float32, UPCAST=INTERPRETED, BLOCK_M=block_m, BLOCK_N=128,
                             BLOCK_K=32, GROUP_M=8, num_warps=8 if block_m == 128 else 4, num_stages=3)
    return out


class SiglipMLP(_eager.SiglipMLP):
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        if x.stride(-1) != 1:
            x = x.contiguous()
        act = ACT_GELU_TANH if self.activation_fn.approximate == "tanh" else ACT_GELU_ERF
        h = linear_act(x, self.fc1.weight, self.fc1.bias, act)
        out = linear_act(h, self.fc2.weight, self.fc2.bias, ACT_NONE)
        return out.reshape(*shape[:-1], out.shape[-1])

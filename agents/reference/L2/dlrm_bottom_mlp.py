"""DLRM's bottom MLP (torchrec DenseArch) with each layer as one Triton GEMM whose epilogue adds the bias and applies
the ReLU before the single bf16 store: the production path writes each GEMM output and reads it back for the ReLU.
fp32 accumulation; each layer's output is rounded once to the input dtype, as the production path rounds it.

Triton's CPU interpreter multiplies bf16 tiles as raw 16-bit integers, so under TRITON_INTERPRET the tiles are
widened to fp32 before tl.dot (exact: bf16 products are exact in fp32, so the result is the one a GPU's bf16
tensor-core dot with fp32 accumulation gives).
"""

from __future__ import annotations

import math
import os

import torch
import triton
import triton.language as tl
from torch import nn


_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _linear_bias_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_wn, stride_ym,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             WIDEN: tl.constexpr):
    """y[m, n] = relu(sum_k x[m, k] w[n, k] + b[n]) for one BLOCK_M x BLOCK_N tile."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_xm + ks[None, :],
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[None, :] * stride_wn + ks[:, None],
                    mask=(cols[None, :] < N) & (ks[:, None] < K), other=0.0)
        if WIDEN:
            x, w = x.to(tl.float32), w.to(tl.float32)
        acc = tl.dot(x, w, acc)
    acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + rows[:, None].to(tl.int64) * stride_ym + cols[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def linear_bias_relu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    if M == 0:
        return y
    block_m = 128 if M >= 128 else max(16, triton.next_power_of_2(M))
    block_n = min(128, max(16, triton.next_power_of_2(N)))
    block_k = min(64, max(16, triton.next_power_of_2(K)))
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    _linear_bias_relu_kernel[grid](x, weight, bias, y, M, N, K, x.stride(0), weight.stride(0), y.stride(0),
                                   BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, WIDEN=_INTERPRETED,
                                   num_warps=4)
    return y


class _Linear(nn.Module):
    """The linear task's parameters (weight [out, in], bias [out]), drawn as it draws them."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)


class DenseArch(nn.Module):
    def __init__(self, in_features: int, layer_sizes: list[int]) -> None:
        super().__init__()
        sizes = [in_features, *layer_sizes]
        self.layers = nn.ModuleList(_Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        shape = features.shape
        x = features.reshape(-1, shape[-1])
        if x.stride(-1) != 1:
            x = x.contiguous()
        for layer in self.layers:
            x = linear_bias_relu(x, layer.weight, layer.bias)
        return x.reshape(*shape[:-1], x.shape[-1])

"""SiluAndMul through SGLang's JIT-compiled CUDA activation kernel (sglang.kernels.ops.activation.activation
.silu_and_mul, what SGLang's SiluAndMul.forward_cuda runs when the hidden size is a multiple of the vector width, as
Llama's 14336 is): silu(gate) * up in fp32 (expf under --use_fast_math), rounded once to x's dtype, both halves of x
read in place with 16-byte vector loads.

SGLang compiles the kernel with nvcc and ninja through apache-tvm-ffi (sglang.kernels.jit) on first use and caches
the build under ~/.cache/sglang/jit (or SGLANG_JIT_CACHE_DIR). It is built here, at import on a GPU machine, so the
nvcc run falls in the worker's start-up and never in a timed call. The build needs CUDA_HOME to name the toolkit
when the nvcc on PATH is a wrapper outside it (scripts/device-chain.sh sets it)."""

from __future__ import annotations

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads the built kernels through
from sglang.kernels.ops.activation.activation import activation_module, silu_and_mul
from torch import nn

if torch.cuda.is_available():
    activation_module(torch.bfloat16)  # the nvcc build (cached): now, not in the first timed call


class SiluAndMul(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        out = torch.empty(x.shape[:-1] + (d,), dtype=x.dtype, device=x.device)
        silu_and_mul(x, out)
        return out

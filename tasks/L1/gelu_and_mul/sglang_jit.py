"""GeluAndMul through SGLang's JIT-compiled CUDA activation kernel, as SGLang's GeluAndMul.forward_cuda calls it:
gelu_tanh_and_mul for approximate="tanh" (Gemma's gelu_pytorch_tanh), gelu_and_mul (erf) for "none"
(sglang.kernels.ops.activation.activation). The activation in fp32 (tanhf / erff under --use_fast_math) times up in
fp32, rounded once to x's dtype; both halves of x read in place with 16-byte vector loads. The kernel requires d to
be a multiple of the vector width (8 bf16 values; SGLang routes other widths to its AOT sgl_kernel, not installable
here).

Built by nvcc at import on a GPU machine, as tasks/L1/silu_and_mul/sglang_jit.py says."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads the built kernels through
from sglang.kernels.ops.activation.activation import activation_module, gelu_and_mul, gelu_tanh_and_mul

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("gelu_and_mul.py"), namespace="tasks.gelu_and_mul")

if torch.cuda.is_available():
    activation_module(torch.bfloat16)  # the nvcc build (cached): now, not in the first timed call


class GeluAndMul(_eager.GeluAndMul):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        out = torch.empty(x.shape[:-1] + (d,), dtype=x.dtype, device=x.device)
        (gelu_tanh_and_mul if self.approximate == "tanh" else gelu_and_mul)(x, out)
        return out

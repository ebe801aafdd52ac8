"""PerTokenGroupQuantFP8 through SGLang's per-token-group fp8 quantization
(sglang.kernels.ops.quantization.fp8_kernel.sglang_per_token_group_quant_fp8, what SGLang's block-fp8 linear and
fused-MoE layers call), which on CUDA runs its JIT-compiled CUDA kernel (per_token_group_quant; the UE8M0
float32-scale format goes to its per_token_group_quant_8bit_v2 kernel). One pass: each group's absmax by a subwarp,
the scale, q = saturate_fp8(x * (1 / scale)), scales fp32 [tokens, groups] row-major.

SGLang floors the absmax at 1e-10 where vLLM floors the scale at 1 / (448 * 512) (an absmax of 1/512): the two
differ only on groups whose largest |x| is below 1/512, which the task's normal inputs (std 1, 128 values a group)
never have. Built by nvcc at import on a GPU machine (one tiny call per scale format compiles both kernels), as
tasks/L1/silu_and_mul/sglang_jit.py says."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads the built kernels through
from sglang.kernels.ops.quantization.fp8_kernel import sglang_per_token_group_quant_fp8

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("quant.py"), namespace="tasks.per_token_group_quant_fp8")

if torch.cuda.is_available():  # the nvcc builds (cached): now, not in the first timed call
    for _ue8m0 in (False, True):
        sglang_per_token_group_quant_fp8(torch.ones(1, 128, dtype=torch.bfloat16, device="cuda"), 128,
                                         scale_ue8m0=_ue8m0)


class PerTokenGroupQuantFP8(_eager.PerTokenGroupQuantFP8):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, scales = sglang_per_token_group_quant_fp8(x.contiguous(), self.group_size, scale_ue8m0=self.use_ue8m0)
        return q, scales

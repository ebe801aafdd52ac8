"""QuickGELU (x * sigmoid(1.702 x), the Qwen2-VL vision MLP's and CLIP's activation) as one hand-written Triton
kernel: a flat grid over the elements, fp32 math, one rounding, one read and one write per element, where vLLM's
native path runs three bf16 kernels, each rounding. Non-contiguous inputs are copied first.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/quick_gelu/quick_gelu.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_quick_gelu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()
BLOCK = 2048


@triton.jit
def _quick_gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-1.702 * x))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class QuickGELU(_eager.QuickGELU):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            _quick_gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=8)
        return out

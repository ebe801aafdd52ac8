"""Hard swish (x * relu6(x + 3) / 6, MobileNetV3) as one hand-written Triton kernel: a flat grid over the elements,
fp32 math, one rounding, one read and one write per element. PyTorch's Hardswish is a single kernel too, so parity
is the most to expect; it is here as a correct bandwidth-bound baseline. Non-contiguous inputs are copied first.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks/L1/hardswish/hardswish.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_hardswish", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()
BLOCK = 2048


@triton.jit
def _hardswish_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class Hardswish(_eager.Hardswish):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            _hardswish_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=8)
        return out

"""A candidate that Triton's interpreter runs correctly and Triton's GPU compiler rejects: its kernel reads a
module-level float that is not a tl.constexpr, which the interpreter (plain Python) allows and the compiler refuses
(scripts/compile_candidates.py's test)."""

import torch
import triton
import triton.language as tl
from torch import nn

SIXTH = 1.0 / 6.0


@triton.jit
def _hardswish_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) * SIXTH
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class Hardswish(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        _hardswish_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out

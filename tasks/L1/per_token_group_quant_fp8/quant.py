"""Dynamic per-token-group fp8 (e4m3) quantization, DeepSeek-V3's activation format, in plain PyTorch.

Every row of x is cut into groups of `group_size` channels; each group gets the scale max|x| / 448 (clamped below
at 1 / (448 * 512), vLLM's minimum scaling factor; with use_ue8m0 first rounded up to a power of two) and
q = clamp(x / scale, -448, 448) rounded to float8_e4m3fn. Returns (q in fp8, scales in fp32 [..., groups]).

As the float64 oracle (x in float64) it returns the exact quotient x / scale and the scale in float64, without the
final fp8 rounding: an fp8 output is then judged by how far it sits from the exact value (round-to-nearest is at
most half an fp8 step away), so production kernels that divide, or multiply by a reciprocal, may land on either
side of a rounding midpoint and both pass.
"""

from __future__ import annotations

import torch
from torch import nn

FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max  # 448
MIN_SCALE = 1.0 / (FP8_MAX * 512.0)


class PerTokenGroupQuantFP8(nn.Module):
    def __init__(self, group_size: int = 128, use_ue8m0: bool = False) -> None:
        super().__init__()
        self.group_size = group_size
        self.use_ue8m0 = use_ue8m0

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.promote_types(x.dtype, torch.float32)
        groups = x.shape[-1] // self.group_size
        grouped = x.reshape(*x.shape[:-1], groups, self.group_size).to(compute)
        scales = grouped.abs().amax(dim=-1, keepdim=True) / FP8_MAX
        if self.use_ue8m0:
            scales = torch.exp2(torch.ceil(torch.log2(scales)))
        scales = scales.clamp(min=MIN_SCALE)
        q = (grouped / scales).clamp(-FP8_MAX, FP8_MAX).reshape(x.shape)
        if x.dtype != torch.float64:
            q = q.to(FP8)
        return q, scales.squeeze(-1)

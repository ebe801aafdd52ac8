"""vLLM's QuantFP8._quantize_group_native (dynamic GroupShape(1, group_size)), verbatim in its math: absmax of the
bf16 groups taken in bf16 and cast to fp32, scales = absmax / 448 (UE8M0: 2^ceil(log2)), clamped at
1 / (448 * 512), x_grouped / scales (bf16 / fp32 -> fp32 IEEE division), clamp, cast to float8_e4m3fn."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("quant.py"), namespace="tasks.per_token_group_quant_fp8")
FP8, FP8_MAX, MIN_SCALE = _eager.FP8, _eager.FP8_MAX, _eager.MIN_SCALE


class PerTokenGroupQuantFP8(_eager.PerTokenGroupQuantFP8):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        orig_shape = x.shape
        num_groups = x.shape[-1] // self.group_size
        x_grouped = x.view(-1, num_groups, self.group_size)
        absmax = x_grouped.abs().max(dim=-1, keepdim=True)[0].float()
        scales_raw = absmax / FP8_MAX
        if self.use_ue8m0:
            scales_raw = torch.exp2(torch.ceil(torch.log2(scales_raw)))
        scales = scales_raw.clamp(min=MIN_SCALE)
        x_quant = (x_grouped / scales).clamp(-FP8_MAX, FP8_MAX).to(FP8)
        return x_quant.view(orig_shape), scales.squeeze(-1).reshape(orig_shape[:-1] + (num_groups,))

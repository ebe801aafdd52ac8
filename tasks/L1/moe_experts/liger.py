"""MoE experts through Liger-Kernel's fused MoE (LigerFusedMoEFunction, liger_kernel.ops.fused_moe), called as
LigerExperts (liger_kernel.transformers.swiglu) calls it when Liger patches transformers' Mixtral / Qwen3-MoE experts:
apply(x, gate_up_proj [E, 2I, H] (gate rows first), down_proj [E, H, I], int32 top-k ids, top-k weights). Triton
kernels sort the (token, slot) pairs by expert, run a gathered grouped GEMM for gate_up with SiLU(gate) * up on its
fp32 accumulators (rounded once to x's dtype), a grouped GEMM for down, and sum each token's slots weighted in fp32.
w13_weight and w2_weight are exactly those two layouts; the ids are cast to int32 as LigerExperts does."""

from __future__ import annotations

from pathlib import Path

import torch
from liger_kernel.ops.fused_moe import LigerFusedMoEFunction

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("experts.py"), namespace="tasks.moe_experts")


class FusedMoEExperts(_eager.FusedMoEExperts):
    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        return LigerFusedMoEFunction.apply(
            hidden_states, self.w13_weight, self.w2_weight, topk_ids.to(torch.int32), topk_weights)

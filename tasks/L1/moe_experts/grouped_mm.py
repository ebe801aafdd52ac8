"""MoE experts through torch's grouped GEMM (F.grouped_mm; torch._grouped_mm before torch 2.10), the path
transformers' `grouped_mm` experts implementation takes: sort the (token, slot) pairs by expert, gather the tokens,
one grouped GEMM for gate_up over all experts (CUTLASS on Hopper), SiluAndMul in bf16, one grouped GEMM for down,
then the weighted sum back per token in fp32. Expert offsets are counted with a scatter-add, so nothing syncs with
the host."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("experts.py"), namespace="tasks.moe_experts")
_grouped_mm = getattr(F, "grouped_mm", None) or torch._grouped_mm


class FusedMoEExperts(_eager.FusedMoEExperts):
    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        experts, tokens = _eager.token_slots(topk_ids)
        order = torch.argsort(experts, stable=True)
        tokens_sorted = tokens[order]
        counts = torch.zeros(self.num_experts, dtype=torch.int32, device=experts.device)
        counts.scatter_add_(0, experts, torch.ones_like(experts, dtype=torch.int32))
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        x = hidden_states.index_select(0, tokens_sorted)
        gate_up = _grouped_mm(x, self.w13_weight.transpose(-2, -1), offs=offs)
        gate, up = gate_up.chunk(2, dim=-1)
        act = F.silu(gate) * up
        y = _grouped_mm(act, self.w2_weight.transpose(-2, -1), offs=offs)
        weighted = y.float() * topk_weights.reshape(-1)[order].float()[:, None]
        out = torch.zeros(hidden_states.shape, dtype=torch.float32, device=hidden_states.device)
        return out.index_add_(0, tokens_sorted, weighted).to(hidden_states.dtype)

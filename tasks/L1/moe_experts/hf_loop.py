"""MoE experts as transformers' eager MixtralSparseMoeBlock computes them: a loop over the experts that received
tokens, each gathering its tokens, gate_up / down matmuls in the model dtype (cuBLAS), SiluAndMul, scaling by the
routing weight, and index_add_ into the output in the model dtype."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("experts.py"), namespace="tasks.moe_experts")


class FusedMoEExperts(_eager.FusedMoEExperts):
    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        final = torch.zeros_like(hidden_states)
        expert_mask = F.one_hot(topk_ids, num_classes=self.num_experts).permute(2, 1, 0)  # [E, top_k, tokens]
        hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in hit.flatten().tolist():
            idx, top_x = torch.where(expert_mask[expert_idx])
            current = hidden_states[top_x]
            gate, up = F.linear(current, self.w13_weight[expert_idx]).chunk(2, dim=-1)
            current = F.linear(F.silu(gate) * up, self.w2_weight[expert_idx])
            current = current * topk_weights[top_x, idx, None]
            final.index_add_(0, top_x, current.to(hidden_states.dtype))
        return final

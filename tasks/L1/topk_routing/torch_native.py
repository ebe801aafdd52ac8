"""MoE top-k routing as vLLM's fused_topk_native writes it: torch.softmax(logits, -1, dtype=float32), torch.topk,
then topk_weights / topk_weights.sum(-1, keepdim=True) when renormalize (vLLM returns int32 ids; this task's
interface returns int64)."""

from __future__ import annotations

import torch
from torch import nn


class TopKRouter(nn.Module):
    def __init__(self, num_experts: int, top_k: int, renormalize: bool = True) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.renormalize = renormalize

    def forward(self, router_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = torch.softmax(router_logits, dim=-1, dtype=torch.float32)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        if self.renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, ids.to(torch.int64)

"""MoE top-k routing in plain PyTorch (vLLM fused_topk semantics): softmax over the expert logits, the top_k
probabilities and their expert ids (largest first), the weights divided by their sum when renormalize.
Also the float64 oracle: it computes in at least fp32 and returns the weights in that precision."""

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
        compute = torch.promote_types(router_logits.dtype, torch.float32)
        probs = torch.softmax(router_logits.to(compute), dim=-1)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        if self.renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, ids.to(torch.int64)

"""The expert computation of a sparse MoE layer (vLLM fused_experts) in plain PyTorch. Also the float64 oracle.

Token t goes to experts topk_ids[t, :] with weights topk_weights[t, :]; expert e computes
down(silu(gate(x)) * up(x)) with [gate | up] = x @ w13_weight[e].T and down = @ w2_weight[e].T, and the token's
output is the weighted sum over its slots. Here a loop over experts gathers each expert's tokens, computes in at
least fp32 and index_adds the weighted results; one rounding at the end. Weights are drawn N(0, 1/fan_in), the
variance-preserving scale of trained projections (as the linear task draws them), so outputs are O(1) at every
size and stacked L2/L3 tasks do not shrink below what atol sees.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def token_slots(topk_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat (token, slot) pairs: the expert of each and the token it came from."""
    tokens, top_k = topk_ids.shape
    return topk_ids.reshape(-1), torch.arange(tokens, device=topk_ids.device).repeat_interleave(top_k)


class FusedMoEExperts(nn.Module):
    def __init__(self, num_experts: int, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.w13_weight = nn.Parameter(
            torch.randn(num_experts, 2 * intermediate_size, hidden_size) / math.sqrt(hidden_size))
        self.w2_weight = nn.Parameter(
            torch.randn(num_experts, hidden_size, intermediate_size) / math.sqrt(intermediate_size))

    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(hidden_states.dtype, torch.float32)
        experts, tokens = token_slots(topk_ids)
        weights = topk_weights.reshape(-1).to(compute)
        out = torch.zeros(hidden_states.shape, dtype=compute, device=hidden_states.device)
        for e in range(self.num_experts):
            slots = (experts == e).nonzero().squeeze(1)
            if slots.numel() == 0:
                continue
            x = hidden_states[tokens[slots]].to(compute)
            gate, up = (x @ self.w13_weight[e].to(compute).T).chunk(2, dim=-1)
            y = (F.silu(gate) * up) @ self.w2_weight[e].to(compute).T
            out.index_add_(0, tokens[slots], y * weights[slots, None])
        return out.to(hidden_states.dtype)

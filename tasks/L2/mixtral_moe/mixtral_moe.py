"""Mixtral's sparse MoE block (vLLM MixtralMoE) built from the L1 tasks: router gate -> topk_routing (softmax top-2,
renormalised) -> moe_experts (gate_up, SiluAndMul, down per expert, weighted sum).

The gate is computed in fp32 from the bf16 hidden states and weight (as transformers' DeepseekV3TopkRouter does):
with bf16 logits, tokens whose 2nd and 3rd logits nearly tie pick different experts in the bf16 module and in the
float64 oracle, and a token sent to another expert is wrong by O(1). fp32 logits make such flips ~1e-7 per token.
TopKRouter and FusedMoEExperts come from component(...), so this one file is the eager module and the production
one.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class FP32Router(nn.Module):
    """Router logits [tokens, num_experts] = x @ weight.T in fp32 (float64 in the oracle)."""

    def __init__(self, hidden_size: int, num_experts: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_experts, hidden_size) / math.sqrt(hidden_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        return F.linear(x.to(compute), self.weight.to(compute))


class MixtralMoE(nn.Module):
    def __init__(self, num_experts: int, top_k: int, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        TopKRouter = component("topk_routing")
        FusedMoEExperts = component("moe_experts")
        self.hidden_size = hidden_size
        self.gate = FP32Router(hidden_size, num_experts)
        self.router = TopKRouter(num_experts, top_k, True)
        self.experts = FusedMoEExperts(num_experts, hidden_size, intermediate_size)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, self.hidden_size)
        topk_weights, topk_ids = self.router(self.gate(hidden_states))
        return self.experts(hidden_states, topk_weights, topk_ids).reshape(shape)

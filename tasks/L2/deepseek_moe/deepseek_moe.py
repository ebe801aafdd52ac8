"""DeepSeek-V2's MoE block with shared experts (vLLM DeepseekV2MoE, softmax greedy top-k as in DeepSeek-V2-Lite)
built from the L1 tasks: routed experts = gate (fp32) -> topk_routing (softmax top-k, not renormalised) ->
moe_experts; shared experts = one SwiGLU MLP of width n_shared_experts * moe_intermediate_size (linear,
silu_and_mul); out = routed * routed_scaling_factor + shared.

The gate is computed in fp32 for the reason mixtral_moe gives (the expert choice must be the float64 oracle's).
Every class comes from component(...), so this one file is the eager module and the production one.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from fastkernels.composition import component
from fastkernels.implementations import import_file


# The fp32 router of the mixtral_moe task (router logits = x @ weight.T in fp32, float64 in the oracle).
FP32Router = import_file(Path(__file__).parents[1] / "mixtral_moe" / "mixtral_moe.py",
                         namespace="tasks.mixtral_moe").FP32Router


class SharedExperts(nn.Module):
    """vLLM DeepseekV2MLP: down_proj(SiluAndMul(gate_up_proj(x)))."""

    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        Linear = component("linear")
        self.gate_up_proj = Linear(hidden_size, 2 * intermediate_size, bias=False)
        self.down_proj = Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = component("silu_and_mul")()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act_fn(self.gate_up_proj(x)))


class DeepseekV2MoE(nn.Module):
    def __init__(self, num_experts: int, top_k: int, hidden_size: int, moe_intermediate_size: int,
                 n_shared_experts: int, routed_scaling_factor: float) -> None:
        super().__init__()
        TopKRouter = component("topk_routing")
        FusedMoEExperts = component("moe_experts")
        self.hidden_size = hidden_size
        self.routed_scaling_factor = routed_scaling_factor
        self.gate = FP32Router(hidden_size, num_experts)
        self.router = TopKRouter(num_experts, top_k, False)
        self.experts = FusedMoEExperts(num_experts, hidden_size, moe_intermediate_size)
        self.shared_experts = SharedExperts(hidden_size, moe_intermediate_size * n_shared_experts)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, self.hidden_size)
        topk_weights, topk_ids = self.router(self.gate(hidden_states))
        routed = self.experts(hidden_states, topk_weights, topk_ids)
        shared = self.shared_experts(hidden_states)
        return (routed * self.routed_scaling_factor + shared).reshape(shape)

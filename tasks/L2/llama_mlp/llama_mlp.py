"""Llama's MLP (vLLM LlamaMLP) built from the L1 tasks: down_proj(SiluAndMul(gate_up_proj(x))).

The Linear and SiluAndMul classes come from component(...), so the same file is the eager module (eager
components; in float64, the oracle) and the production one (production components), and an agent's L1 kernels
change what it computes in composed mode.
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        Linear = component("linear")
        SiluAndMul = component("silu_and_mul")
        self.gate_up_proj = Linear(hidden_size, 2 * intermediate_size, bias=False)
        self.down_proj = Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = SiluAndMul()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act_fn(self.gate_up_proj(x)))

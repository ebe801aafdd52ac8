"""Causal conv1d through flash-linear-attention's Triton kernel, fla.modules.convolution.causal_conv1d (what FLA's
ShortConvolution runs for Mamba2 / GatedDeltaNet / GLA layers). FLA takes x as [batch, seqlen, dim] and accepts any
strides, so the task's [batch, dim, seqlen] input goes in as a transposed view and the output comes back the same
way; accumulation is fp32 with one rounding of the activated result."""

from __future__ import annotations

from pathlib import Path

import torch
from fla.modules.convolution import causal_conv1d

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("causal_conv1d.py"), namespace="tasks.causal_conv1d")


class CausalConv1d(_eager.CausalConv1d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = causal_conv1d(x=x.transpose(1, 2), weight=self.weight, bias=self.bias, activation=self.activation)
        return y.transpose(1, 2)

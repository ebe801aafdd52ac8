"""What diffusers' AdaLayerNormZero / AdaLayerNormZeroSingle (FLUX, HunyuanVideo) and SGLang's LayerNormScaleShift
forward_native run: F.layer_norm in x's dtype (PyTorch's fused kernel, fp32 statistics), then
normed * (1 + scale) + shift as separate elementwise kernels in x's dtype."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("modulated_layer_norm.py"), namespace="tasks.modulated_layer_norm")


class LayerNormScaleShift(_eager.LayerNormScaleShift):
    def forward(self, x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        normed = F.layer_norm(x, (self.hidden_size,), self.weight, self.bias, self.eps)
        return normed * (1 + scale) + shift

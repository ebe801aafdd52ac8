"""timm GlobalResponseNorm.forward as shipped (and HF ConvNextV2GRN, the same ops): x.norm(p=2) over the spatial
dims (fp32 accumulation, bf16 result), the channel mean, then x + addcmul(bias, weight, x * x_n), each op a
PyTorch kernel in x's dtype."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("global_response_norm.py"), namespace="tasks.global_response_norm")


class GlobalResponseNorm(_eager.GlobalResponseNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_g = x.norm(p=2, dim=self.spatial_dim, keepdim=True)
        x_n = x_g / (x_g.mean(dim=self.channel_dim, keepdim=True) + self.eps)
        return x + torch.addcmul(self.bias.view(self.wb_shape), self.weight.view(self.wb_shape), x * x_n)

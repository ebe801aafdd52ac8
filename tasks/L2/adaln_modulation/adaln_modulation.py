"""diffusers AdaLayerNormZero (FLUX and HunyuanVideo double-stream blocks) built from the L1 tasks:
emb -> SiLU -> linear (embedding_dim -> 6 * embedding_dim) -> chunk into shift/scale/gate for attention and MLP;
x -> LayerNorm (no affine, eps 1e-6) modulated by the attention's shift and scale.

The Linear and LayerNormScaleShift classes come from component(...), so this one file is the eager module (eager
components; in float64, the oracle) and the production one. The SiLU of the [batch, embedding_dim] conditioning
row is one tiny elementwise op and stays inline.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class AdaLayerNormZero(nn.Module):
    def __init__(self, embedding_dim: int, norm_eps: float = 1e-6) -> None:
        super().__init__()
        Linear = component("linear")
        LayerNormScaleShift = component("modulated_layer_norm")
        self.linear = Linear(embedding_dim, 6 * embedding_dim, bias=True)
        self.norm = LayerNormScaleShift(embedding_dim, eps=norm_eps, elementwise_affine=False)

    def forward(self, x: torch.Tensor, emb: torch.Tensor):
        emb = self.linear(F.silu(emb))
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = emb.chunk(6, dim=1)
        x = self.norm(x, shift_msa[:, None], scale_msa[:, None])
        return x, gate_msa, shift_mlp, scale_mlp, gate_mlp

"""diffusers AdaLayerNormZero with the LayerNorm and its modulation fused into one Triton kernel.

The conditioning projection stays a cuBLAS GEMM (SiLU of a [batch, dim] row is negligible); its six chunks are
views of one [batch, 6 * dim] tensor, and the fused kernel reads shift and scale from those views directly, so the
normalised activations never make a bf16 round trip through memory (production writes LayerNorm's output, then
reads it back for the multiply and again for the add).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


def _load_fused_norm():
    """The L1 reference candidate for modulated_layer_norm (a Triton kernel), imported from its file."""
    path = Path(__file__).resolve().parents[1] / "L1" / "modulated_layer_norm.py"
    spec = importlib.util.spec_from_file_location("_reference_l1_modulated_layer_norm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fused = _load_fused_norm()


class AdaLayerNormZero(nn.Module):
    def __init__(self, embedding_dim: int, norm_eps: float = 1e-6) -> None:
        super().__init__()
        self.linear = nn.Linear(embedding_dim, 6 * embedding_dim, bias=True)
        self.norm = _fused.LayerNormScaleShift(embedding_dim, eps=norm_eps, elementwise_affine=False)

    def forward(self, x: torch.Tensor, emb: torch.Tensor):
        emb = self.linear(F.silu(emb))
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = emb.chunk(6, dim=1)
        return self.norm(x, shift_msa[:, None], scale_msa[:, None]), gate_msa, shift_mlp, scale_mlp, gate_mlp

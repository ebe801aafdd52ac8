"""DLRM's pairwise dot-product feature interaction (torchrec InteractionArch) in plain PyTorch. Also the float64
oracle: the dots are computed in at least fp32 and rounded once.

The dense feature vector and the F pooled sparse embeddings are stacked into F + 1 vectors per sample; every pair
(i < j) contributes one dot product, in torch.triu_indices(F + 1, F + 1, offset=1) order (row-major upper
triangle), appended after the dense features.
"""

from __future__ import annotations

import torch
from torch import nn


class InteractionArch(nn.Module):
    def __init__(self, num_sparse_features: int) -> None:
        super().__init__()
        self.F = num_sparse_features
        self.register_buffer("triu_indices", torch.triu_indices(self.F + 1, self.F + 1, offset=1), persistent=False)

    def forward(self, dense_features: torch.Tensor, sparse_features: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(dense_features.dtype, torch.float32)
        combined = torch.cat((dense_features.unsqueeze(1), sparse_features), dim=1).to(compute)
        interactions = torch.bmm(combined, combined.transpose(1, 2))
        flat = interactions[:, self.triu_indices[0], self.triu_indices[1]]
        return torch.cat((dense_features.to(compute), flat), dim=1).to(dense_features.dtype)

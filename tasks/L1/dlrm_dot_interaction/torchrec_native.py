"""torchrec's InteractionArch.forward verbatim: cat, torch.bmm in the input dtype (cuBLAS batched GEMM, fp32
accumulation, one rounding to bf16), gather of the upper triangle, cat with the dense features."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor and the triu_indices buffer.
_eager = import_file(Path(__file__).with_name("interaction.py"), namespace="tasks.dlrm_dot_interaction")


class InteractionArch(_eager.InteractionArch):
    def forward(self, dense_features: torch.Tensor, sparse_features: torch.Tensor) -> torch.Tensor:
        if self.F <= 0:
            return dense_features
        combined_values = torch.cat((dense_features.unsqueeze(1), sparse_features), dim=1)
        interactions = torch.bmm(combined_values, torch.transpose(combined_values, 1, 2))
        interactions_flat = interactions[:, self.triu_indices[0], self.triu_indices[1]]
        return torch.cat((dense_features, interactions_flat), dim=1)

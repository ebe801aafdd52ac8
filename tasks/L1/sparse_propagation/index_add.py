"""The LightGCN layer as a message-passing scatter (PyTorch Geometric's propagate on LGConv with a precomputed
normalisation): gather x[col], scale by the edge weight, index_add_ into the rows, in fp32, rounded once. On CUDA the
scatter is atomicAdd-based."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("propagation.py"), namespace="tasks.sparse_propagation")


class LightGCNPropagation(_eager.LightGCNPropagation):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(self.num_nodes, device=x.device).repeat_interleave(
            torch.diff(self.crow_indices), output_size=self.col_indices.numel())
        messages = x.float().index_select(0, self.col_indices).mul_(self.values.float()[:, None])
        out = torch.zeros(self.num_nodes, x.shape[1], dtype=torch.float32, device=x.device)
        return out.index_add_(0, rows, messages).to(x.dtype)

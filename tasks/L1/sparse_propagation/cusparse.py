"""The LightGCN layer as torch.sparse.mm over the CSR adjacency (LightGCN's `torch.sparse.mm(self.Graph, all_emb)`,
in CSR form): cuSPARSE SpMM on CUDA in x's dtype (bf16 operands, fp32 compute), MKL on the CPU (fp32 only there,
so the fp32 variant below is the one the CPU runs)."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor and the graph buffers (the same graph for every implementation).
_eager = import_file(Path(__file__).with_name("propagation.py"), namespace="tasks.sparse_propagation")


class LightGCNPropagation(_eager.LightGCNPropagation):
    def adjacency(self, dtype: torch.dtype) -> torch.Tensor:
        return torch.sparse_csr_tensor(self.crow_indices, self.col_indices, self.values.to(dtype),
                                       (self.num_nodes, self.num_nodes), check_invariants=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sparse.mm(self.adjacency(x.dtype), x)


class LightGCNPropagationFP32(LightGCNPropagation):
    """The same SpMM in fp32 (LightGCN trains in fp32), rounded once to x's dtype."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        return torch.sparse.mm(self.adjacency(compute), x.to(compute)).to(x.dtype)

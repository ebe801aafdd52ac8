"""ColBERT's colbert_score verbatim (colbert.modeling.colbert): D_padded @ Q^T as one batched GEMM in the input
dtype (cuBLAS, fp32 accumulation, bf16 scores), padding rows of the scores set to -9999 in place, max over document
tokens, sum over query tokens."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("maxsim.py"), namespace="tasks.maxsim")


class ColBERTScore(_eager.ColBERTScore):
    def forward(self, Q: torch.Tensor, D_padded: torch.Tensor, D_mask: torch.Tensor) -> torch.Tensor:
        scores_padded = D_padded @ Q.to(dtype=D_padded.dtype).permute(0, 2, 1)
        D_padding = ~D_mask.view(scores_padded.size(0), scores_padded.size(1)).bool()
        scores_padded[D_padding] = -9999
        scores = scores_padded.max(1).values
        return scores.sum(-1)

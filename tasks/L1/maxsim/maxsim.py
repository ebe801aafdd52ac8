"""ColBERT's late-interaction MaxSim score (colbert_score) in plain PyTorch. Also the float64 oracle.

score[d] = sum over query tokens i of max over the document's valid tokens j of <Q[q, i], D[d, j]>, with Q either
one query broadcast over all documents (re-ranking) or one query per document. Padding tokens (D_mask False) take
no part in the max. fp32 (float64 for the oracle) math, one rounding.
"""

from __future__ import annotations

import torch
from torch import nn


class ColBERTScore(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, Q: torch.Tensor, D_padded: torch.Tensor, D_mask: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(D_padded.dtype, torch.float32)
        queries = Q.to(compute).expand(D_padded.shape[0], -1, -1)  # one query per document
        scores = torch.einsum("nid,njd->nji", queries, D_padded.to(compute))  # [docs, doc_len, query_len]
        scores = scores.masked_fill(~D_mask.bool()[..., None], float("-inf"))
        return scores.amax(dim=1).sum(dim=-1).to(D_padded.dtype)

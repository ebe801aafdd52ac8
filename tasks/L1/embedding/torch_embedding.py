"""Token embedding through torch.nn.functional.embedding (ATen's embedding / index_select gather kernel), what
vLLM's UnquantizedEmbeddingMethod.embedding calls for VocabParallelEmbedding on one GPU. The weight is left
uninitialised, as in vLLM: the reference weights are loaded into it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.weight = nn.Parameter(torch.empty(num_embeddings, embedding_dim))

    def forward(self, input_: torch.Tensor) -> torch.Tensor:
        return F.embedding(input_, self.weight)

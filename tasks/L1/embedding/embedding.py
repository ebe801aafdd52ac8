"""Token embedding lookup (vLLM VocabParallelEmbedding on one GPU): out = weight[input_] in plain PyTorch indexing.
A gather is exact, so the float64 oracle is the same lookup in float64.

The weight is left uninitialised, as in vLLM (which loads it from the checkpoint): the task's `parameters:` redraw
fills it with N(0, 1) on the device, which for Llama's 128256 x 4096 table is much faster than a CPU init."""

from __future__ import annotations

import torch
from torch import nn


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.weight = nn.Parameter(torch.empty(num_embeddings, embedding_dim))

    def forward(self, input_: torch.Tensor) -> torch.Tensor:
        return self.weight[input_]

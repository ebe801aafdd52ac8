"""EmbeddingBag through torch.nn.functional.embedding_bag, what torch.nn.EmbeddingBag.forward calls (ATen's fused
embedding_bag kernel; on CUDA it accumulates bf16 rows in fp32 and rounds once)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the weight (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("embedding_bag.py"), namespace="tasks.embedding_bag")


class EmbeddingBag(_eager.EmbeddingBag):
    def forward(
        self, input: torch.Tensor, offsets: torch.Tensor | None = None, per_sample_weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights)

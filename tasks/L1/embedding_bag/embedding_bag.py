"""Sum/mean/max-pooled embedding bags (torch.nn.EmbeddingBag, the pooled lookup of DLRM's sparse features) in plain
PyTorch. Also the float64 oracle: rows are gathered, weighted and reduced in at least fp32, rounded once.

Bags come as nn.EmbeddingBag takes them: a 2-D input [bags, bag_size] (fixed-size bags, as DLRMv2's fixed multi-hot
features are), or a 1-D input with `offsets` [bags] giving where each bag starts. An empty bag pools to zeros.
The weight is left uninitialised (it is loaded from a checkpoint): the task's `parameters:` redraw fills it.
"""

from __future__ import annotations

import torch
from torch import nn


def bag_ids(input: torch.Tensor, offsets: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Flat indices, the bag each one belongs to, and the number of bags."""
    if input.dim() == 2:
        bags, size = input.shape
        ids = torch.arange(bags, device=input.device).repeat_interleave(size)
        return input.reshape(-1), ids, bags
    assert offsets is not None, "a 1-D input needs offsets"
    ends = torch.cat((offsets[1:], offsets.new_tensor([input.numel()])))
    ids = torch.arange(offsets.numel(), device=input.device).repeat_interleave(ends - offsets)
    return input, ids, offsets.numel()


class EmbeddingBag(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, mode: str = "mean") -> None:
        super().__init__()
        assert mode in ("sum", "mean", "max"), mode
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.mode = mode
        self.weight = nn.Parameter(torch.empty(num_embeddings, embedding_dim))

    def forward(
        self, input: torch.Tensor, offsets: torch.Tensor | None = None, per_sample_weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        compute = torch.promote_types(self.weight.dtype, torch.float32)
        flat, ids, bags = bag_ids(input, offsets)
        rows = self.weight[flat].to(compute)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1, 1).to(compute)
        out = torch.zeros(bags, self.embedding_dim, dtype=compute, device=rows.device)
        if self.mode == "max":
            out = out.scatter_reduce_(0, ids[:, None].expand_as(rows), rows, "amax", include_self=False)
        else:
            out = out.index_add_(0, ids, rows)
            if self.mode == "mean":
                counts = torch.bincount(ids, minlength=bags).clamp_min(1).to(compute)
                out = out / counts[:, None]
        return out.to(self.weight.dtype)

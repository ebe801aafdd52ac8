"""The DLRM forward pass (torchrec DLRM) built from lower tasks: sum-pooled embedding bags for the sparse features
(embedding_bag, L1), the bottom MLP over the dense features (dlrm_bottom_mlp, L2), the pairwise dot interaction
(dlrm_dot_interaction, L1) and the top MLP (torchrec OverArch: Linear + ReLU layers from the linear task, the last
Linear without activation) -> one logit per sample. Every class comes from component(...), so this one file is
the eager module (in float64, the oracle) and the production one.

Each of the F tables has num_embeddings rows; sparse_features [batch, F, bag_size] holds each sample's indices per
feature (fixed hotness, as DLRMv2's multi-hot features; bag_size 1 is DLRM's one-hot Criteo). Tables are drawn
N(0, embedding_dim^-1/2) here, so the dot products feeding the top MLP have unit scale (torchrec's tiny uniform
init would make them vanish below atol).
"""

from __future__ import annotations

import torch
from torch import nn

from fastkernels.composition import component


class DLRM(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, num_sparse_features: int, dense_in_features: int,
                 dense_arch_layer_sizes: list[int], over_arch_layer_sizes: list[int]) -> None:
        super().__init__()
        EmbeddingBag = component("embedding_bag")
        DenseArch = component("dlrm_bottom_mlp")
        InteractionArch = component("dlrm_dot_interaction")
        Linear = component("linear")
        self.embedding_bags = nn.ModuleList(
            EmbeddingBag(num_embeddings, embedding_dim, "sum") for _ in range(num_sparse_features))
        with torch.no_grad():
            for bag in self.embedding_bags:
                bag.weight.normal_(0.0, embedding_dim ** -0.25)
        self.dense_arch = DenseArch(dense_in_features, dense_arch_layer_sizes)
        self.inter_arch = InteractionArch(num_sparse_features)
        over_in = embedding_dim + num_sparse_features * (num_sparse_features + 1) // 2
        sizes = [over_in, *over_arch_layer_sizes]
        self.over_arch = nn.ModuleList(Linear(a, b, bias=True) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, dense_features: torch.Tensor, sparse_features: torch.Tensor) -> torch.Tensor:
        embedded_dense = self.dense_arch(dense_features)
        embedded_sparse = torch.stack(
            [bag(sparse_features[:, f]) for f, bag in enumerate(self.embedding_bags)], dim=1)
        x = self.inter_arch(embedded_dense, embedded_sparse)
        for layer in self.over_arch[:-1]:
            x = torch.relu(layer(x))
        return self.over_arch[-1](x)

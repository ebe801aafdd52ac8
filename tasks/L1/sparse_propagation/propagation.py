"""One LightGCN propagation layer: out = A_hat @ x, with A_hat = D^-1/2 A D^-1/2 the symmetrically normalised
adjacency of the user-item interaction graph (users are nodes 0..U-1, items U..U+I-1). In plain PyTorch
(gather, scale, index_add in fp32, rounded once); also the float64 oracle.

The graph is part of the model, as LightGCN precomputes its normalised adjacency once per dataset: it is stored in
CSR form as persistent buffers (crow_indices, col_indices, values), so every implementation loads the same graph
with the weights. The constructor draws a random graph with skewed (power-law) user and item activity from a
generator seeded by the sizes alone, so every construction of a case holds the same graph (the state dicts of the
oracle, the baselines and a candidate then have the same shapes).
"""

from __future__ import annotations

import torch
from torch import nn

ACTIVITY_EXPONENT = 0.5  # node of rank r is drawn with weight (r + 1)^-0.5: long-tailed degrees (Amazon-Book: max ~4k)


def _skewed(count: int, draws: int, gen: torch.Generator) -> torch.Tensor:
    """`draws` node ids in [0, count), by inverse CDF of the power-law weights, ranks shuffled over the ids."""
    cdf = torch.arange(1, count + 1, dtype=torch.float64).pow(-ACTIVITY_EXPONENT).cumsum(0)
    ranks = torch.searchsorted(cdf, torch.rand(draws, generator=gen, dtype=torch.float64) * cdf[-1])
    return torch.randperm(count, generator=gen)[ranks.clamp_max(count - 1)]


def random_normalized_adjacency(num_users: int, num_items: int, num_interactions: int):
    """CSR (crow, col, values) of D^-1/2 A D^-1/2 for a random bipartite graph of ~num_interactions distinct edges.

    Drawn on the CPU whatever the default device (the harness builds modules under `torch.device("cuda")`, where a CPU
    generator is refused), so every device gets the same graph; the module's `.to(device)` moves it."""
    with torch.device("cpu"):
        return _adjacency(num_users, num_items, num_interactions)


def _adjacency(num_users: int, num_items: int, num_interactions: int):
    gen = torch.Generator().manual_seed(num_users * 1_000_003 + num_items * 1_009 + num_interactions)
    users = _skewed(num_users, num_interactions, gen)
    pairs = torch.unique(users * num_items + _skewed(num_items, num_interactions, gen))
    users, items = pairs // num_items, pairs % num_items + num_users
    n = num_users + num_items
    keys = torch.cat((users * n + items, items * n + users)).sort().values  # row-major order, rows then columns
    rows, cols = keys // n, keys % n
    degree = torch.bincount(rows, minlength=n).to(torch.float64)
    d_inv_sqrt = degree.pow(-0.5).masked_fill(degree == 0, 0.0)
    crow = torch.zeros(n + 1, dtype=torch.int64)
    crow[1:] = torch.cumsum(torch.bincount(rows, minlength=n), 0)
    return crow, cols, (d_inv_sqrt[rows] * d_inv_sqrt[cols]).to(torch.float32)


class LightGCNPropagation(nn.Module):
    def __init__(self, num_users: int, num_items: int, num_interactions: int) -> None:
        super().__init__()
        self.num_users = num_users
        self.num_items = num_items
        self.num_nodes = num_users + num_items
        crow, col, values = random_normalized_adjacency(num_users, num_items, num_interactions)
        self.register_buffer("crow_indices", crow)
        self.register_buffer("col_indices", col)
        self.register_buffer("values", values)

    def row_indices(self) -> torch.Tensor:
        counts = self.crow_indices[1:] - self.crow_indices[:-1]
        return torch.arange(self.num_nodes, device=counts.device).repeat_interleave(counts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        messages = x.index_select(0, self.col_indices).to(compute) * self.values.to(compute)[:, None]
        out = torch.zeros(self.num_nodes, x.shape[1], dtype=compute, device=x.device)
        return out.index_add_(0, self.row_indices(), messages).to(x.dtype)

"""Wrong forward signature (`ids` instead of `input_`): must be RUNTIME_ERROR (interface mismatch)."""
import torch


class VocabParallelEmbedding(torch.nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(num_embeddings, embedding_dim))

    def forward(self, ids):
        return torch.nn.functional.embedding(ids, self.weight)

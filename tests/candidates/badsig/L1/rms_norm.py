"""forward() lacks the residual parameter: must be RUNTIME_ERROR (interface mismatch)."""
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        return x

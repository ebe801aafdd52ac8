"""Raises in forward: must be RUNTIME_ERROR."""
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def forward(self, x, residual=None):
        raise RuntimeError("kernel launch failed")

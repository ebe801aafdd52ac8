"""Forgets the weight: close to right, but wrong. Must be INCORRECT."""
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def forward(self, x, residual=None):
        h = x.float() if residual is None else x.float() + residual.float()
        out = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)
        return out if residual is None else (out, h.to(x.dtype))

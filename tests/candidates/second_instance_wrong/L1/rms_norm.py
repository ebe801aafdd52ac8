"""Right while it is the only live instance of its class, wrong when built beside another (a class-level weak set):
caught when the harness times several instances a side (harness.instances), since each extra candidate instance
passes the correctness rounds before it is timed."""
import weakref

import torch

LIVE = weakref.WeakSet()


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.beside_another = len(LIVE) > 0
        LIVE.add(self)

    def forward(self, x, residual=None):
        h = x.float() if residual is None else x.float() + residual.float()
        out = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()).to(x.dtype)
        if self.beside_another:
            out = out * 0
        return out if residual is None else (out, h.to(x.dtype))

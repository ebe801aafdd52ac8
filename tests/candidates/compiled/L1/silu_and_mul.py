"""An honest candidate that uses torch.compile: compiling is allowed and must not read as patching torch."""
import torch


def _silu_and_mul(x):
    d = x.shape[-1] // 2
    return (torch.nn.functional.silu(x[..., :d].float()) * x[..., d:].float()).to(x.dtype)


class SiluAndMul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = torch.compile(_silu_and_mul)

    def forward(self, x):
        return self.kernel(x)

"""Inference BatchNorm2d followed by an activation (timm BatchNormAct2d, the norm + act of timm's EfficientNet and
MobileNet blocks; ultralytics Conv and torchvision Conv2dNormActivation run the same pair) in plain PyTorch.
Also the float64 oracle: per channel (x - running_mean) / sqrt(running_var + eps) * weight + bias, then the
activation, all in fp32, rounded once.

The running statistics are buffers, which a manifest cannot redraw, so the constructor draws them (seeded by the
harness before construction): running_mean N(0, 0.5^2), running_var U(0.25, 2.25), as in a trained net, so a
kernel that ignores either one fails. num_batches_tracked is kept for nn.BatchNorm2d's state dict.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

ACTIVATIONS = ("identity", "relu", "silu", "hard_swish", "gelu")


def activation(x: torch.Tensor, name: str) -> torch.Tensor:
    """timm's act_layer names, written out so the float64 oracle computes them in float64."""
    if name == "identity":
        return x
    if name == "relu":
        return x.clamp_min(0)
    if name == "silu":
        return x * torch.sigmoid(x)
    if name == "hard_swish":
        return x * (x + 3).clamp(0, 6) / 6
    if name == "gelu":
        return 0.5 * x * (1 + torch.erf(x / 2**0.5))
    raise ValueError(f"act_layer {name!r} is not one of {', '.join(ACTIVATIONS)}")


def torch_activation(x: torch.Tensor, name: str) -> torch.Tensor:
    """The same activations through torch.nn.functional, in x's dtype (what timm runs)."""
    fns = {"identity": lambda t: t, "relu": F.relu, "silu": F.silu, "hard_swish": F.hardswish, "gelu": F.gelu}
    return fns[name](x)


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features: int, eps: float = 1e-5, act_layer: str = "relu") -> None:
        super().__init__(num_features, eps=eps)
        assert act_layer in ACTIVATIONS, act_layer
        self.act_layer = act_layer
        with torch.no_grad():
            self.running_mean.normal_(0.0, 0.5)
            self.running_var.uniform_(0.25, 2.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        shape = (1, -1, 1, 1)
        scale = torch.rsqrt(self.running_var.to(compute) + self.eps) * self.weight.to(compute)
        shift = self.bias.to(compute) - self.running_mean.to(compute) * scale
        return activation(x.to(compute) * scale.view(shape) + shift.view(shape), self.act_layer).to(x.dtype)

"""Depthwise Conv2d as torch_cudnn (torch_cudnn.py) runs it, compiled by Inductor under max-autotune
(fastkernels.compiled): Inductor benchmarks cuDNN's grouped convolution against its Triton conv2d template, which
takes the groups (GROUPS = channels here), at compile time and keeps the faster, what `torch.compile(mode=
"max-autotune")` gives a ConvNeXt or MobileNet user. On conv2d the template beat cuDNN 1.38-1.85x on four of five
SDXL cases (H200, 2026-12-06); on depthwise shapes it serves four of five cases, 1.47-1.81x over the faster cuDNN
layout (H100, 2026-12-07, docs/results/h100-2026-12-07-forty-fifth). The default compile is not listed: for a lone
convolution it calls the same cuDNN kernel."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_cudnn = import_file(Path(__file__).with_name("torch_cudnn.py"), namespace="tasks.depthwise_conv2d")

DepthwiseConv2dMaxAutotune = compiled(_cudnn.DepthwiseConv2d, mode=MAX_AUTOTUNE)

"""ConvNormAct as the composed production path builds it (conv_bn_act.py over the first production L1 classes), its
forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a timm model runs: the batch norm and
activation fused into one pass after the cuDNN convolution."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("conv_bn_act.py"), namespace="tasks.conv_bn_act")

ConvNormAct = compiled(_composed.ConvNormAct)

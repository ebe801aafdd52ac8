"""ResnetBlock2D as the composed production path builds it (resnet_block_2d.py over the first production L1 classes),
its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a diffusers UNet or VAE runs: group
norms with their SiLU, the time-embedding add and the residual fused around the cuDNN convolutions."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("resnet_block_2d.py"), namespace="tasks.resnet_block_2d")

ResnetBlock2D = compiled(_composed.ResnetBlock2D)

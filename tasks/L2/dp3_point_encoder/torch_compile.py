"""PointNetEncoderXYZ as the composed production path builds it (pointnet.py over the first production L1 classes), its
forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on DP3's policy runs. The composed path
runs each 64-256-channel GEMM, LayerNorm and ReLU over every point as a kernel of its own. Compiled, Inductor can
fuse only the PyTorch work between the library kernels (the ReLUs, the max over points); the GEMMs stay cuBLAS's and,
where Liger is installed, the LayerNorms Liger's Triton kernels. Whether that pays is for the GPU run to say."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("pointnet.py"), namespace="tasks.dp3_point_encoder")

PointNetEncoderXYZ = compiled(_composed.PointNetEncoderXYZ)

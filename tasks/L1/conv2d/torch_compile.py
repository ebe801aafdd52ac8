"""Conv2d as cudnn (cudnn.py) runs it, compiled by Inductor under max-autotune (fastkernels.compiled): Inductor
benchmarks cuDNN's convolution against its Triton implicit-GEMM conv templates at compile time and keeps the faster,
the baseline `torch.compile(mode="max-autotune")` gives production users. The default compile is not listed: for a
lone convolution it calls the same cuDNN kernel."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_cudnn = import_file(Path(__file__).with_name("cudnn.py"), namespace="tasks.conv2d")

Conv2dMaxAutotune = compiled(_cudnn.Conv2d, mode=MAX_AUTOTUNE)

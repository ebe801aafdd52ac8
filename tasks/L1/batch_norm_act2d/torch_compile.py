"""BatchNormAct2d as torch_native (torch_native.py) runs it, compiled by Inductor (fastkernels.compiled): its PyTorch kernels
fused, the baseline a one-line `torch.compile` gives production users.
`...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.batch_norm_act2d")

BatchNormAct2d = compiled(_native.BatchNormAct2d)
BatchNormAct2dMaxAutotune = compiled(_native.BatchNormAct2d, mode=MAX_AUTOTUNE)

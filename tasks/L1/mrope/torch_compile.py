"""MRotaryEmbedding as torch_native (torch_native.py) runs it, compiled by Inductor (fastkernels.compiled): its PyTorch kernels
fused, the baseline a one-line `torch.compile` gives production users."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.mrope")

MRotaryEmbedding = compiled(_native.MRotaryEmbedding)

"""GELU as torch_native (torch_native.py) runs it, compiled by Inductor (fastkernels.compiled): one generated Triton
elementwise kernel in place of PyTorch's vectorised one, the baseline a one-line `torch.compile` gives production
users. `...MaxAutotune` is the same under max-autotune (block sizes benchmarked at compile time)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.gelu")

GELU = compiled(_native.GELU)
GELUMaxAutotune = compiled(_native.GELU, mode=MAX_AUTOTUNE)

"""LayerNorm as torch_native (torch_native.py) runs it, compiled by Inductor (fastkernels.compiled): Inductor's own
Triton reduction in place of PyTorch's fused LayerNorm kernel, the baseline a one-line `torch.compile` gives
production users. `...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.layer_norm")

LayerNorm = compiled(_native.LayerNorm)
LayerNormMaxAutotune = compiled(_native.LayerNorm, mode=MAX_AUTOTUNE)

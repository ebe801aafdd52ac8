"""VJEPA2RotaryEmbedding3D as transformers_native (transformers_native.py) runs it, compiled by Inductor (fastkernels.compiled): its PyTorch kernels
fused, the baseline a one-line `torch.compile` gives production users.
`...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("transformers_native.py"), namespace="tasks.rope_3d")

VJEPA2RotaryEmbedding3D = compiled(_native.VJEPA2RotaryEmbedding3D)
VJEPA2RotaryEmbedding3DMaxAutotune = compiled(_native.VJEPA2RotaryEmbedding3D, mode=MAX_AUTOTUNE)

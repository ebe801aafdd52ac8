"""nerfstudio's torch HashEncoding (nerfstudio_torch.py) compiled by Inductor (fastkernels.compiled): the 8 gathers,
hashes and the trilinear blend fused into few kernels; and the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("nerfstudio_torch.py"), namespace="tasks.hash_grid_encoding")

HashEncoding = compiled(_native.HashEncoding)
HashEncodingMaxAutotune = compiled(_native.HashEncoding, mode=MAX_AUTOTUNE)

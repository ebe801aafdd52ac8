"""torchrec's InteractionArch.forward (torchrec_native.py) compiled by Inductor (fastkernels.compiled): the cat, the
upper-triangle gather and the output cat fuse around the batched GEMM; and the same under max-autotune, which also
tunes that GEMM."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torchrec_native.py"), namespace="tasks.dlrm_dot_interaction")

InteractionArch = compiled(_native.InteractionArch)
InteractionArchMaxAutotune = compiled(_native.InteractionArch, mode=MAX_AUTOTUNE)

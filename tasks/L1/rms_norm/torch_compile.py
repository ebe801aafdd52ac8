"""vLLM's RMSNorm.forward_native (rms_norm.py) compiled by Inductor (fastkernels.compiled): the path vLLM takes
under its Inductor compilation when the rms_norm custom op is off; Inductor can fuse the residual add, square-mean and
scale into one generated Triton kernel. `...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("rms_norm.py"), namespace="tasks.rms_norm")

RMSNorm = compiled(_native.RMSNorm)
RMSNormMaxAutotune = compiled(_native.RMSNorm, mode=MAX_AUTOTUNE)

"""Softmax as torch_native (torch_native.py) runs it, compiled by Inductor (fastkernels.compiled):
the baseline a one-line `torch.compile` gives production users, timed beside the native kernel.
`...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.softmax")

Softmax = compiled(_native.Softmax)
SoftmaxMaxAutotune = compiled(_native.Softmax, mode=MAX_AUTOTUNE)

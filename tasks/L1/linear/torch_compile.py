"""Linear as torch_cublas (torch_cublas.py) runs it, compiled by Inductor under max-autotune (fastkernels.compiled):
Inductor benchmarks its Triton GEMM templates against the cuBLAS call at compile time and keeps the fastest, the
strongest GEMM a one-line `torch.compile` gives production users. (The default compile calls cuBLAS itself, so it is
not listed.)"""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_cublas.py"), namespace="tasks.linear")

LinearMaxAutotune = compiled(_native.Linear, mode=MAX_AUTOTUNE)

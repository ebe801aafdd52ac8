"""GPU tests run Triton compiled, not interpreted: undo the CPU suite's TRITON_INTERPRET where a GPU exists."""

import os

import torch

if torch.cuda.is_available():
    os.environ.pop("TRITON_INTERPRET", None)

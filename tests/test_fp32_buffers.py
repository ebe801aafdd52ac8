"""KeepsFp32Buffers: a module cast to bf16 keeps the named tables' fp32 values (a rounded rotary table would shift
every angle), widens them with the module to float64 (the oracle), and moves them along with it."""

from __future__ import annotations

import torch

from fastkernels.fp32_buffers import KeepsFp32Buffers


class Tables(KeepsFp32Buffers):
    fp32_buffers = ("table",)

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.tensor([0.1, 1 / 3], dtype=torch.float32), persistent=False)
        self.register_buffer("other", torch.tensor([0.1, 1 / 3], dtype=torch.float32), persistent=False)
        self.weight = torch.nn.Parameter(torch.ones(2))


def test_a_cast_to_bf16_leaves_the_named_tables_unrounded_and_only_them():
    fp32 = Tables().table.clone()
    module = Tables().to(torch.bfloat16)
    assert module.table.dtype == torch.float32 and torch.equal(module.table, fp32)
    assert module.other.dtype == torch.bfloat16 and module.weight.dtype == torch.bfloat16


def test_a_cast_to_float64_widens_the_tables_with_the_module():
    module = Tables().to(torch.float64)
    assert module.table.dtype == torch.float64 and module.other.dtype == torch.float64
    assert torch.equal(module.table, Tables().table.double())

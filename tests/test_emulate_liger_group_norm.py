"""scripts/emulate_liger_group_norm.py replays Liger-Kernel's group_norm statistics (bf16 block sums, 512 sequential
adds per thread at Triton's default 4 warps) on the CPU: the diagnosis of why the H200 rejected Liger on every SDXL
case. The emulation must show that failure at 4 warps and none when each thread adds few enough terms."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "emulate_liger_group_norm.py"
spec = importlib.util.spec_from_file_location("emulate_liger_group_norm", SCRIPT)
emulation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(emulation)


def outside_share(report: str) -> float:
    return float(report.rsplit(" ", 1)[1].rstrip("%"))


def test_a_block_sum_of_exact_bf16_values_is_exact_while_the_sum_stays_small():
    values = torch.ones(1000, dtype=torch.bfloat16)  # each thread's partial sum stays far below bf16's 256 limit
    assert emulation.bf16_block_sum(values, threads=128) == 1000.0


def test_four_warps_lose_the_variance_and_fail_most_elements_of_an_sdxl_group():
    report = emulation.emulate(1280, 32, 32, threads=128, generator=torch.Generator().manual_seed(0))
    assert outside_share(report) > 30  # the H200 rejected 44% of this case's elements


def test_enough_threads_keep_the_statistics_within_the_tolerance():
    report = emulation.emulate(1280, 32, 32, threads=1024, generator=torch.Generator().manual_seed(0))
    assert outside_share(report) == 0

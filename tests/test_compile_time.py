"""A shape's compile time is measured, not guessed: the first call's excess over the quickest later call in the
correctness rounds is what an implementation spends once per shape, and rows carry it as `compile_s` so the harness
overhead can leave it out (issue #3)."""

from __future__ import annotations

import time

import torch

from fastkernels.checks import run_rounds
from fastkernels.correctness import Verdict


def _rounds(count: int) -> list[dict[str, torch.Tensor]]:
    return [{"x": torch.full((4,), float(index))} for index in range(count)]


def _always_right(index: int, output) -> Verdict:
    return Verdict("", None)


class CompilesOnFirstCall(torch.nn.Module):
    def __init__(self, compile_seconds: float) -> None:
        super().__init__()
        self.compile_seconds, self.calls = compile_seconds, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls == 1:
            time.sleep(self.compile_seconds)
        return x * 2


def test_the_first_calls_excess_over_the_quickest_later_call_is_the_compile_time():
    module = CompilesOnFirstCall(0.3)
    passed = run_rounds(module, _rounds(3), _always_right, [], "baseline", repeat_runs=2)
    assert module.calls == 4  # round 0 twice, then rounds 1 and 2
    assert 0.29 <= passed.first_call_s < 0.6


def test_an_implementation_without_a_first_call_cost_reports_next_to_none():
    passed = run_rounds(CompilesOnFirstCall(0.0), _rounds(3), _always_right, [], "baseline", repeat_runs=2)
    assert 0.0 <= passed.first_call_s < 0.05


def test_a_single_call_has_nothing_to_compare_with_and_reports_zero():
    passed = run_rounds(CompilesOnFirstCall(0.3), _rounds(1), _always_right, [], "baseline", repeat_runs=1)
    assert passed.first_call_s == 0.0

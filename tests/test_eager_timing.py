"""harness.time_eager: the plain PyTorch module's time is recorded beside the production baseline's (docs/baselines.md),
timed on its own launch pad and within a time budget, since the eager modules of scans loop over the sequence in
Python (0.14-0.72 s a call on the H200, 2026-12-01)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import torch

from fastkernels.baseline_choice import time_eager
from fastkernels.records import Status
from fastkernels.runner import run_task
from scoring import cpu_job


class RecordingClock:
    name = "recording"

    def __init__(self) -> None:
        self.keys: list[str] = []

    def time_call(self, call, prepare=None, key=""):
        if prepare is not None:
            prepare()
        self.keys.append(key)
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1e3


def test_rows_record_the_eager_modules_time_and_production_still_serves(tmp_path):
    job, manifest = cpu_job(None, tmp_path, "silu_and_mul", "harness.time_eager=true")
    rows = run_task(job, manifest, tmp_path, lambda row: None)
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    for row in rows:
        assert row.baseline_impl != "eager"
        assert isinstance(row.baseline_alternatives["eager"], float) and row.baseline_alternatives["eager"] > 0


def test_a_slow_eager_module_is_timed_at_least_four_times_and_then_only_while_the_budget_lasts():
    clock = RecordingClock()
    ctx = SimpleNamespace(harness=SimpleNamespace(eager_timing_s=0.1), clock=clock)
    sets = [{"x": torch.zeros(4)}, {"x": torch.ones(4)}]
    median_ms = time_eager(ctx, lambda x: time.sleep(0.04), sets, 25, "scan/case/eager", None)
    timed = len(clock.keys) - 1  # one warm-up call
    assert 4 <= timed <= 6 and median_ms >= 40
    assert set(clock.keys) == {"scan/case/eager"}  # a launch pad of its own, not the contenders' "…/select"


def test_a_fast_eager_module_stops_at_the_iteration_cap():
    clock = RecordingClock()
    ctx = SimpleNamespace(harness=SimpleNamespace(eager_timing_s=5.0), clock=clock)
    time_eager(ctx, lambda x: x + 1, [{"x": torch.zeros(4)}], 10, "t/c/eager", None)
    assert len(clock.keys) - 1 == 10

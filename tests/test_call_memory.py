"""A row's `call_mib` says how much device memory one call of each side allocates beyond what was held before it
(outputs, workspaces, temporaries), from torch's caching allocator: measured once a side before timing, on the
first instance and input set, and only on a GPU. The allocator's counters are faked here; tests/gpu reads real
ones."""

from __future__ import annotations

import pytest
import torch

from fastkernels import call_memory
from fastkernels.records import ResultRow, Status


@pytest.fixture
def allocator(monkeypatch):
    """A caching allocator's counters: `held` bytes allocated now, `peak` since the last reset."""
    state = {"held": 100 << 20, "peak": 0, "events": []}
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: state["events"].append("sync"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: state["held"])
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: state["peak"])

    def reset():
        state["peak"] = state["held"]
        state["events"].append("reset")
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset)
    return state


def allocating(state, scratch_mib: int, output_mib: int):
    """A call that allocates scratch it frees before returning, and an output it returns."""
    def forward(**_):
        state["events"].append("call")
        state["peak"] = max(state["peak"], state["held"] + (scratch_mib + output_mib << 20))
        state["held"] += output_mib << 20
        return "output"
    return forward


def test_a_call_counts_its_scratch_and_output_beyond_what_was_held_and_is_synchronised_around(allocator):
    assert call_memory.call_mib(lambda: allocating(allocator, 512, 64)()) == 576.0
    assert allocator["events"] == ["sync", "reset", "call", "sync"]  # queued work finished before and after


def test_each_side_is_measured_on_its_first_instance_and_a_missing_candidate_is_none(allocator):
    sides = {"baseline": [allocating(allocator, 0, 64), allocating(allocator, 999, 999)],
             "candidate": [allocating(allocator, 1024, 64)]}
    assert call_memory.sides_call_mib(sides, {"x": torch.ones(1)}) == (64.0, 1088.0)
    assert call_memory.sides_call_mib({"baseline": sides["baseline"]}, {}) == (64.0, None)


def test_the_row_holds_baseline_then_candidate_none_without_a_candidate_and_a_cpu_row_has_none():
    row = dict(task="t", level=1, categories=[], case="c", status=Status.NOT_ATTEMPTED, baseline_ms=1.0)
    assert ResultRow(**row, call_mib=(64.0, None)).call_mib == (64.0, None)
    assert ResultRow(**row).call_mib is None
    with pytest.raises(ValueError):
        ResultRow(**row, call_mib=(None, 64.0))  # the baseline's figure is always there


def test_a_side_whose_call_raises_is_named_with_the_cause_chained(allocator):
    def broken(**_):
        raise RuntimeError("illegal memory access")
    sides = {"baseline": [allocating(allocator, 0, 64)], "candidate": [broken]}
    with pytest.raises(call_memory.CallFailed) as failed:
        call_memory.sides_call_mib(sides, {})
    assert failed.value.side == "candidate" and "illegal memory access" in str(failed.value.__cause__)
    with pytest.raises(call_memory.CallFailed) as failed:
        call_memory.sides_call_mib({"baseline": [broken], "candidate": [allocating(allocator, 0, 64)]}, {})
    assert failed.value.side == "baseline"


def test_the_case_fails_as_the_side_that_raised(allocator):
    from fastkernels.checks import CaseFailure
    from fastkernels.evaluate import _call_memory

    def broken(**_):
        raise RuntimeError("illegal memory access")
    for side, status in (("baseline", Status.BASELINE_ERROR), ("candidate", Status.RUNTIME_ERROR)):
        sides = {"baseline": [allocating(allocator, 0, 64)], "candidate": [allocating(allocator, 0, 64)]}
        sides[side] = [broken]
        with pytest.raises(CaseFailure) as failure:
            _call_memory(sides, {})
        assert failure.value.status is status
        assert failure.value.reason.startswith(f"the {side}'s call, while its memory was measured: RuntimeError")

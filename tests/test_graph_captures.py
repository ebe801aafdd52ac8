"""graphs.py captures every implementation several times, because a CUDA graph's replay speed is drawn when it is
captured (H200, 2026-11-30): the captures interleave between sides, shrink to fit memory, and a module that refuses
any capture is reported not capturable rather than timed on a partial set. CUDA itself is faked here; tests/gpu
captures real graphs."""

from __future__ import annotations

import pytest
import torch

from fastkernels import graphs


@pytest.fixture
def fake_cuda(monkeypatch):
    state = {"reserved": 0, "free": 80 << 30, "log": []}
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda: state["reserved"])
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (state["free"], 141 << 30))
    return state


def fake_capture(state, per_capture: int, refuse: dict[str, int] | None = None):
    counts: dict[str, int] = {}

    def capture(module, static):
        name = module.__name__
        counts[name] = counts.get(name, 0) + 1
        state["log"].append(f"{name}{counts[name] - 1}")
        if refuse and counts[name] > refuse.get(name, 10**9):
            return f"{name} refused capture {counts[name] - 1}"
        state["reserved"] += per_capture
        return graphs.Captured(graph=None, inputs=static, output=None)
    return capture


def baseline(**_):
    return None


def candidate(**_):
    return None


def test_captures_alternate_between_sides_up_to_the_wanted_count(monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=4)
    assert fake_cuda["log"] == ["baseline0", "candidate0", "baseline1", "candidate1", "baseline2", "candidate2",
                                "baseline3", "candidate3"]
    assert len(captures["baseline"]) == len(captures["candidate"]) == 4 and notes == ""


def test_large_captures_are_fewer_so_that_they_take_at_most_a_quarter_of_free_memory(monkeypatch, fake_cuda):
    fake_cuda["free"] = 40 << 30
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=2 << 30))  # 4 GiB a round
    captures, _ = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=8)
    assert len(captures["baseline"]) == len(captures["candidate"]) == 1 + (10 << 30) // (4 << 30)


def test_one_capture_a_side_even_when_memory_is_short(monkeypatch, fake_cuda):
    fake_cuda["free"] = 1 << 30
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=4 << 30))
    captures, _ = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=8)
    assert len(captures["baseline"]) == len(captures["candidate"]) == 1


def test_a_candidate_that_refuses_a_later_capture_is_not_capturable_and_the_baseline_is_timed_alone(
        monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20, refuse={"candidate": 2}))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=4)
    assert set(captures) == {"baseline"} and len(captures["baseline"]) == 4
    assert notes == "candidate not capturable: candidate refused capture 2"
    assert "candidate3" not in fake_cuda["log"]  # no more attempts once it refused


def test_an_uncapturable_baseline_leaves_nothing_to_time(monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20, refuse={"baseline": 0}))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=3)
    assert captures == {} and notes.startswith("baseline not capturable")

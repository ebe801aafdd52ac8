"""The judge's oracle replays a CUDA graph only when it pays (a slow eager call) and only after its replay matched the
eager references bit for bit on every round; anything else keeps it eager. Checked on the host with a stand-in
capture that behaves like a graph: fixed output tensors, rewritten from the static inputs on every replay."""

from __future__ import annotations

import multiprocessing
import threading
import time
from typing import Any, Callable

import pytest
import torch

from fastkernels.config import TASKS_DIR
from fastkernels.correctness import flatten
from fastkernels.judge import JudgeSpec, _Case, plain_leaves, serve
from fastkernels.oracle_graph import GRAPH_MIN_MS, Oracle, bitwise_equal
from test_judge import eager_module, round_inputs

SPEC = JudgeSpec(str(TASKS_DIR), "rms_norm", "cpu", 0, correctness_rounds=3)
CASE = ("cpu_residual_odd", 1e-2, 1.6e-2, {})
INF = float("inf")  # the stand-in graph replays at eager speed: keep it anyway where speed is not the point


class FakeGraph:
    """A graph on the host: `capture` runs the module once into output tensors kept for good; `replay` recomputes
    from the static inputs into them. `corrupt`: the replay (counting from 0) whose output[0] is one ulp off."""

    def __init__(self, module: Callable[..., Any], static: dict[str, torch.Tensor], corrupt: int | None = None):
        self.module, self.static, self.corrupt = module, static, corrupt
        self.output = module(**static)
        self.replays, self.released = 0, False

    def replay(self) -> Any:
        assert not self.released, "replay of a released graph"
        for kept, new in zip(flatten(self.output), flatten(self.module(**self.static))):
            kept.copy_(new)
        if self.replays == self.corrupt:
            first = flatten(self.output)[0].view(-1)
            first[7] = torch.nextafter(first[7], torch.tensor(float("inf"), dtype=first.dtype))
        self.replays += 1
        return self.output

    def release(self) -> None:
        self.released = True


def capturing(corrupt: int | None = None) -> tuple[list[FakeGraph], Callable[..., FakeGraph]]:
    made: list[FakeGraph] = []

    def capture(module: Callable[..., Any], static: dict[str, torch.Tensor]) -> FakeGraph:
        made.append(FakeGraph(module, static, corrupt))
        return made[-1]
    return made, capture


def test_a_graph_that_matches_eager_on_every_round_is_used():
    made, capture = capturing()
    case = _Case(SPEC, *CASE, capture=capture, threshold_ms=0.0, keep_below=INF)
    info = case.oracle.info()
    assert info["oracle_path"] == "graph" and info["oracle_reason"] == "", info
    assert info["eager_oracle_ms"] > 0 and info["graph_oracle_ms"] > 0
    assert made[0].replays == SPEC.correctness_rounds and not made[0].released


def test_a_graph_one_ulp_off_on_one_round_is_discarded():
    made, capture = capturing(corrupt=1)  # round 1's self-check replay
    case = _Case(SPEC, *CASE, capture=capture, threshold_ms=0.0, keep_below=INF)
    info = case.oracle.info()
    assert info["oracle_path"] == "eager" and info["graph_oracle_ms"] is None
    assert "round 1 differs from eager in output[0]" in info["oracle_reason"]
    assert made[0].released
    replays = made[0].replays
    output = eager_module()(**round_inputs(2))
    assert case.fresh(round_inputs(2), plain_leaves(output)).passed  # eager answers, the graph is not touched
    assert made[0].replays == replays


def test_a_capture_that_raises_leaves_the_oracle_eager_with_the_reason():
    def capture(module, static):
        raise RuntimeError("operation not permitted when stream is capturing")

    case = _Case(SPEC, *CASE, capture=capture, threshold_ms=0.0, keep_below=INF)
    info = case.oracle.info()
    assert info["oracle_path"] == "eager"
    assert info["oracle_reason"].startswith(
        "capture failed: RuntimeError: operation not permitted when stream is capturing"), info
    output = eager_module()(**round_inputs(0))
    assert case.fresh(round_inputs(0), plain_leaves(output)).passed


def test_only_a_slow_oracle_is_captured():
    def refuse(module, static):
        raise AssertionError("a fast oracle must not be captured")

    rounds = [{"x": torch.randn(8)} for _ in range(3)]
    fast = Oracle(lambda x: 2 * x, refuse)
    fast.start(rounds)
    assert fast.path == "eager" and f"under {GRAPH_MIN_MS} ms" in fast.reason and fast.eager_ms < GRAPH_MIN_MS

    def slow_module(x):
        time.sleep(2 * GRAPH_MIN_MS / 1e3)
        return 2 * x

    made, capture = capturing()
    slow = Oracle(slow_module, capture, keep_below=INF)
    references = slow.start(rounds)
    assert slow.path == "graph" and slow.eager_ms >= GRAPH_MIN_MS and len(made) == 1
    assert all(torch.equal(reference, 2 * r["x"].double()) for reference, r in zip(references, rounds))


class Timed(Oracle):
    """An oracle whose calls report set times: the first three (the rounds' eager calls) `eager` (total, launched)
    ms, every later one (the self-check replays) `replay` ms."""

    def __init__(self, capture, eager: tuple[float, float], replay: float) -> None:
        super().__init__(lambda x: 2 * x, capture)
        self.eager, self.replay_ms, self.calls = eager, replay, 0

    def _timed(self, call):
        self.calls += 1
        return (*self.eager, call()) if self.calls <= 3 else (self.replay_ms, self.replay_ms, call())


def test_a_device_bound_oracle_is_not_captured():
    def refuse(module, static):
        raise AssertionError("a device-bound oracle must not be captured")

    oracle = Timed(refuse, eager=(300.0, 30.0), replay=0.0)  # launched in 30 of its 300 ms
    oracle.start([{"x": torch.randn(8)} for _ in range(3)])
    assert oracle.path == "eager" and oracle.launch_share == pytest.approx(0.1)
    assert "device bound" in oracle.reason


def test_a_graph_that_replays_no_faster_than_eager_is_released():
    made, capture = capturing()
    oracle = Timed(capture, eager=(100.0, 100.0), replay=85.0)  # launch bound, but the replay saves only 15%
    oracle.start([{"x": torch.randn(8)} for _ in range(3)])
    assert oracle.path == "eager" and made[0].released and "not under 0.8 x the eager" in oracle.reason
    made, capture = capturing()
    oracle = Timed(capture, eager=(100.0, 100.0), replay=25.0)
    oracle.start([{"x": torch.randn(8)} for _ in range(3)])
    assert oracle.path == "graph" and not made[0].released and oracle.graph_ms == 25.0


def test_fresh_verdicts_are_the_same_on_the_graph_and_eager_paths():
    made, capture = capturing()
    graph = _Case(SPEC, *CASE, capture=capture, threshold_ms=0.0, keep_below=INF)
    eager = _Case(SPEC, *CASE)
    assert graph.oracle.path == "graph" and eager.oracle.path == "eager"
    module = eager_module()
    for trial in range(3):  # new values each time: a replay that kept old static inputs would fail the right one
        inputs = {name: torch.randn_like(t, dtype=torch.float32).to(t.dtype) for name, t in round_inputs(0).items()}
        normed, residual = module(**{k: v.clone() for k, v in inputs.items()})
        right = plain_leaves((normed, residual))
        normed = normed.clone()
        normed[2, 5] += 0.5
        wrong = plain_leaves((normed, residual))
        before = made[0].replays
        assert graph.fresh(inputs, right).passed and eager.fresh(inputs, right).passed
        on_graph, on_eager = graph.fresh(inputs, wrong), eager.fresh(inputs, wrong)
        assert made[0].replays == before + 2  # both answers came from the graph
        assert not on_graph.passed and on_graph == on_eager and "output[0]" in on_graph.reason


def test_closing_a_case_frees_its_graph():
    made, capture = capturing()
    case = _Case(SPEC, *CASE, capture=capture, threshold_ms=0.0, keep_below=INF)
    case.close()
    assert made[0].released and case.oracle.path == "eager" and case.oracle.reason == "graph released"
    output = eager_module()(**round_inputs(1))
    assert case.fresh(round_inputs(1), plain_leaves(output)).passed


def test_the_judge_closes_a_case_before_it_builds_the_next(monkeypatch):
    events: list[tuple[str, int]] = []
    build = _Case.__init__

    def traced_build(self, *args, **kwargs):
        events.append(("build", id(self)))
        build(self, *args, **kwargs)

    monkeypatch.setattr(_Case, "__init__", traced_build)
    monkeypatch.setattr(_Case, "close", lambda self: events.append(("close", id(self))))
    ours, theirs = multiprocessing.Pipe()
    judge = threading.Thread(target=serve, args=(SPEC, theirs))
    judge.start()
    for _ in range(2):
        ours.send(("case", *CASE))
        assert ours.recv() == ("ok", None)
    ours.send(("oracle_info",))
    kind, info = ours.recv()
    ours.send(("close",))
    judge.join(timeout=30)
    assert [event for event, _ in events] == ["build", "close", "build"] and events[0][1] == events[1][1]
    assert kind == "ok" and info["oracle_path"] == "eager" and "CUDA device" in info["oracle_reason"]


@pytest.mark.parametrize("a, b, same", [
    (torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]), True),
    (torch.tensor([0.0]), torch.tensor([-0.0]), False),
    (torch.tensor([1.0], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float32), False),
    (torch.tensor([1, 2]), torch.tensor([1, 2]), True),
    (torch.ones(2, 3), torch.ones(3, 2), False),
    (None, None, True),
    (torch.ones(1), None, False),
])
def test_bitwise_equal(a, b, same):
    assert bitwise_equal(a, b) is same

"""A call that synchronises with the host is never captured in a CUDA graph, by the worker (capture.capture, for
graphs.py) or by the judge (oracle_graph.CudaGraphOracle): its capture would fail, and torch 2.11 keeps a failed
capture's memory pool reserved until the process exits (on the H200, 2026-12-06, moe_experts' judge kept 48 GiB that
way and its worker 71 GiB; the same growth ran the 80 GB H100 out of memory). The last warm-up call runs under
torch's sync debug mode "error", and a sync there ends the attempt before any graph exists. CUDA is faked here: a
fake sync debug mode, and a module that raises what torch raises when it syncs in mode "error"; tests/gpu runs the
real one."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest
import torch

from fastkernels import capture, oracle_graph
from fastkernels.capture import HostSync, without_host_sync
from fastkernels.oracle_graph import Oracle

SYNC = "called a synchronizing CUDA operation"  # torch's message in sync debug mode "error"


@pytest.fixture
def fake_cuda(monkeypatch):
    """Streams, graphs and the sync debug mode on the host; `made` counts the graphs constructed, `streams` the
    streams."""
    state = {"mode": 0, "made": 0, "modes_seen": [], "streams": 0}

    def set_mode(mode):
        state["mode"] = {"default": 0, "warn": 1, "error": 2}.get(mode, mode)

    def new_graph():
        state["made"] += 1
        return SimpleNamespace(reset=lambda: None, replay=lambda: None)

    stream = SimpleNamespace(wait_stream=lambda other: None)

    def new_stream():
        state["streams"] += 1
        return stream
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: state["mode"])
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", set_mode)
    monkeypatch.setattr(torch.cuda, "Stream", new_stream)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "stream", lambda s: nullcontext())
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: stream)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "CUDAGraph", new_graph)
    monkeypatch.setattr(torch.cuda, "graph", lambda g: nullcontext())
    monkeypatch.setattr(capture, "release_generator_capture", lambda: None)
    monkeypatch.setattr(oracle_graph, "release_generator_capture", lambda: None)
    monkeypatch.setattr(capture, "_WARMUP_STREAMS", {})
    return state


def module(state, syncs: bool):
    """A forward that records the sync debug mode it ran under and, if `syncs`, behaves as an `.item()` does."""
    def forward(x):
        state["modes_seen"].append(state["mode"])
        if syncs and state["mode"] == 2:
            raise RuntimeError(SYNC)
        return x * 2
    return forward


def test_a_call_that_syncs_raises_host_sync_naming_the_operation_and_the_mode_is_restored(fake_cuda):
    fake_cuda["mode"] = 1  # whatever the process had ("warn" here) comes back
    with pytest.raises(HostSync, match="synchronises with the host, so no capture was tried .*synchronizing"):
        without_host_sync(lambda: module(fake_cuda, syncs=True)(torch.ones(2)))
    assert fake_cuda["mode"] == 1 and fake_cuda["modes_seen"] == [2]


def test_a_call_that_does_not_sync_returns_its_value_and_other_errors_pass_through_unchanged(fake_cuda):
    assert torch.equal(without_host_sync(lambda: module(fake_cuda, syncs=False)(torch.ones(2))), torch.full((2,), 2.))
    assert fake_cuda["mode"] == 0

    def broken():
        raise RuntimeError("shape mismatch")
    with pytest.raises(RuntimeError, match="shape mismatch") as raised:
        without_host_sync(broken)
    assert not isinstance(raised.value, HostSync) and fake_cuda["mode"] == 0


def test_the_worker_never_captures_a_module_that_syncs_and_says_why(fake_cuda):
    note = capture.capture(module(fake_cuda, syncs=True), {"x": torch.ones(2)}, warmup=3)
    assert isinstance(note, str) and note.startswith("synchronises with the host, so no capture was tried"), note
    assert fake_cuda["made"] == 0  # no graph, so no memory pool left behind
    assert fake_cuda["modes_seen"] == [0, 0, 2]  # only the last warm-up call is checked
    assert fake_cuda["mode"] == 0


def test_the_worker_captures_a_module_that_does_not_sync_outside_the_debug_mode(fake_cuda):
    captured = capture.capture(module(fake_cuda, syncs=False), {"x": torch.ones(2)}, warmup=3)
    assert isinstance(captured, capture.Captured) and fake_cuda["made"] == 1
    assert fake_cuda["modes_seen"] == [0, 0, 2, 0]  # the captured call itself runs in the process's own mode


def test_the_judge_keeps_an_oracle_that_syncs_eager_without_trying_a_capture(fake_cuda):
    forward = module(fake_cuda, syncs=True)
    oracle = Oracle(forward, oracle_graph.CudaGraphOracle, threshold_ms=0.0, keep_below=float("inf"))
    oracle._timed = lambda call: (10.0, 10.0, call())  # a slow, launch-bound eager call: a graph would pay
    oracle.start([{"x": torch.ones(2)}])
    assert oracle.path == "eager" and fake_cuda["made"] == 0
    assert oracle.reason.startswith("not captured: the oracle synchronises with the host"), oracle.reason
    assert fake_cuda["mode"] == 0


def test_the_judge_still_captures_an_oracle_that_does_not_sync(fake_cuda):
    forward = module(fake_cuda, syncs=False)
    graph = oracle_graph.CudaGraphOracle(forward, {"x": torch.ones(2)})
    assert fake_cuda["made"] == 1 and fake_cuda["modes_seen"] == [2, 0]  # the one warm-up checked, then captured
    graph.release()


def test_the_worker_and_the_judge_share_one_warm_up_whose_last_call_alone_is_checked(fake_cuda):
    capture.warm_up(module(fake_cuda, syncs=False), {"x": torch.ones(2)}, 4)
    assert fake_cuda["modes_seen"] == [0, 0, 0, 2] and fake_cuda["mode"] == 0
    with pytest.raises(HostSync):
        capture.warm_up(module(fake_cuda, syncs=True), {"x": torch.ones(2)}, 1)


def test_every_capture_and_oracle_of_a_process_warms_up_on_one_stream(fake_cuda):
    # a stream's freed blocks serve that stream only, and cuBLAS keeps a workspace a stream: a new stream a capture
    # held one more of each (after a failed capture, beyond empty_cache: H100, 2026-12-07)
    for _ in range(3):
        assert isinstance(capture.capture(module(fake_cuda, syncs=False), {"x": torch.ones(2)}), capture.Captured)
        assert isinstance(capture.capture(module(fake_cuda, syncs=True), {"x": torch.ones(2)}), str)
        oracle_graph.CudaGraphOracle(module(fake_cuda, syncs=False), {"x": torch.ones(2)}).release()
    assert fake_cuda["streams"] == 1

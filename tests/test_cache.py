"""The flush before every timed call: twice the last-level cache overwritten, and on a GPU the persisting-L2 lines a
candidate may have pinned (a CUDA access-policy window) demoted first, through cuda-python. The CUDA runtime is the
edge this machine cannot reach, so it is faked here as a `cuda.bindings.runtime` module; the device runs use the
real one."""

from __future__ import annotations

import sys
import types
from enum import Enum

import pytest
import torch

from fastkernels import cache


class _Error(Enum):
    cudaSuccess = 0
    cudaErrorNotSupported = 801


def _fake_runtime(monkeypatch, result: _Error, calls: list[str]) -> None:
    runtime = types.ModuleType("cuda.bindings.runtime")
    runtime.cudaError_t = _Error

    def reset():
        calls.append("reset")
        return (result,)

    runtime.cudaCtxResetPersistingL2Cache = reset
    bindings = types.ModuleType("cuda.bindings")
    bindings.runtime = runtime
    package = types.ModuleType("cuda")
    package.bindings = bindings
    monkeypatch.setitem(sys.modules, "cuda", package)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", runtime)


def test_on_the_cpu_the_flush_overwrites_twice_the_cache_and_says_so():
    flush, note = cache.cache_flush("cpu", 1.5)
    assert note == "cache flush: 3 MB overwritten"
    flush()  # runs; nothing to reset on a CPU


def test_the_reset_calls_the_cuda_runtime_and_fails_loudly(monkeypatch):
    calls: list[str] = []
    _fake_runtime(monkeypatch, _Error.cudaSuccess, calls)
    reset = cache.persisting_l2_reset()
    assert reset is not None
    reset()
    assert calls == ["reset"]
    _fake_runtime(monkeypatch, _Error.cudaErrorNotSupported, calls)
    with pytest.raises(RuntimeError, match="cudaCtxResetPersistingL2Cache failed"):
        cache.persisting_l2_reset()()


def test_a_gpu_flush_resets_persisting_lines_before_it_overwrites(monkeypatch):
    calls: list[str] = []
    _fake_runtime(monkeypatch, _Error.cudaSuccess, calls)

    class Props:
        L2_cache_size = 2**20

    class Buffer:
        def zero_(self):
            calls.append("overwrite")

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Props())
    monkeypatch.setattr(cache.torch, "empty", lambda *args, **kwargs: Buffer())
    flush, note = cache.cache_flush("cuda", 60)
    assert note == "cache flush: 120 MB overwritten, persisting L2 lines reset"
    flush()
    assert calls == ["reset", "overwrite"]


def test_without_cuda_python_the_log_says_the_persisting_lines_are_not_reset(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda", None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: type("P", (), {"L2_cache_size": 0})())
    monkeypatch.setattr(cache.torch, "empty", lambda *args, **kwargs: None)
    assert cache.persisting_l2_reset() is None
    _, note = cache.cache_flush("cuda", 60)
    assert note.endswith("persisting L2 NOT reset (no cuda-python)")

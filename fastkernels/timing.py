"""The timing protocol: one small, exactly specified function, shared by the GPU and the CPU path.

`time_interleaved(calls, sets, clock, flush, warmup, iterations)`:
1. warm up: every implementation runs `warmup` times, cycling through the input sets; nothing is recorded;
2. for iteration i in 0..iterations-1, implementations run in order on even i and in reverse order on odd i
   (A B, B A, ...) so drift and order effects hit both; each call uses input set i mod len(sets);
3. each call is timed alone by the clock, inside an NVTX range `<label>/<impl>`: the clock first waits until the
   device is idle, runs `flush()` (an L2 flush on the GPU) outside the timed interval, then times the call.
Returns per implementation the list of times in milliseconds, in call order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import nvtx


class Clock(Protocol):
    """Times one call after running `prepare` untimed. `name` says what the samples are."""

    name: str

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None) -> float: ...


class HostClock:
    """perf_counter around a call; with `synchronize` (a GPU), wall time from an idle device to an idle device."""

    name = "host_clock"

    def __init__(self, synchronize: Callable[[], None] | None = None) -> None:
        self._synchronize = synchronize or (lambda: None)

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None) -> float:
        if prepare is not None:
            prepare()
        self._synchronize()
        start = time.perf_counter_ns()
        call()
        self._synchronize()
        return (time.perf_counter_ns() - start) / 1e6


class CudaEventClock:
    """CUDA events on the current stream around one call, measuring device time.

    After a device sync (no earlier work leaks in), `prepare` (the L2 flush) and a ~`pad_us` spin kernel are queued
    ahead of the start event, so the device is still busy while the host launches the call: the interval holds the
    call's device work, not the host's launch latency (which CUDA graphs remove in production).
    """

    name = "cuda_events"

    def __init__(self, pad_us: float = 500.0) -> None:
        import torch

        self._torch = torch
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self._pad_cycles = int(pad_us * 2000)  # cycles at ~2 GHz; at a lower clock the pad only grows longer

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None) -> float:
        self._torch.cuda.synchronize()
        if prepare is not None:
            prepare()
        if self._pad_cycles:
            self._torch.cuda._sleep(self._pad_cycles)
        self._start.record()
        call()
        self._end.record()
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


def time_interleaved(
    calls: dict[str, Callable[[Any], Any]],
    sets: Sequence[Any],
    clock: Clock,
    flush: Callable[[], None] | None,
    warmup: int,
    iterations: int,
    label: str = "",
) -> dict[str, list[float]]:
    """Time every implementation in `calls` on rotated input `sets`; see the module docstring for the protocol."""
    names = list(calls)
    for index in range(warmup):
        for name in names:
            calls[name](sets[index % len(sets)])
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(iterations):
        order = names if index % 2 == 0 else names[::-1]
        inputs = sets[index % len(sets)]
        for name in order:
            with nvtx.annotate(f"{label}/{name}" if label else name):
                samples[name].append(clock.time_call(lambda: calls[name](inputs), flush))
    return samples


@dataclass(frozen=True)
class Summary:
    median_ms: float
    spread: float  # interquartile range over the median


def summarize(samples: Sequence[float]) -> Summary:
    values = np.asarray(samples, dtype=np.float64)
    median = float(np.median(values))
    q1, q3 = np.percentile(values, [25, 75])
    return Summary(median_ms=median, spread=float((q3 - q1) / median) if median > 0 else 0.0)


def speedup_ci95(baseline: Sequence[float], candidate: Sequence[float], seed: int = 0, resamples: int = 2000) -> tuple[float, float]:
    """Bootstrap 95% interval of median(baseline) / median(candidate)."""
    rng = np.random.default_rng(seed)
    b = np.asarray(baseline, dtype=np.float64)
    c = np.asarray(candidate, dtype=np.float64)
    b_medians = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
    c_medians = np.median(rng.choice(c, size=(resamples, c.size), replace=True), axis=1)
    ratios = b_medians / np.maximum(c_medians, 1e-12)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)

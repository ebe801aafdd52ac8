"""Which production implementation serves as a case's baseline: the fastest correct one, chosen from interleaved
calls; and the plain (eager) module's time for the record (`harness.time_eager`), never chosen."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

import torch

from fastkernels.timing import continuing, summarize, time_interleaved

if TYPE_CHECKING:  # evaluate imports this module
    from fastkernels.evaluate import CaseContext

Inputs = dict[str, torch.Tensor]

SELECTION_BATCH = 6  # iterations a baseline contender is timed before the clearly slower ones are dropped
CLEARLY_SLOWER = 1.10  # a contender whose fastest call is this much slower than the best one's median is dropped


def choose_baseline(
    ctx: CaseContext, baselines: dict[str, torch.nn.Module], sets, eager: torch.nn.Module | None = None,
) -> tuple[str, dict[str, float]]:
    """The fastest correct baseline by median time; every contender's median is reported.

    Contenders are timed interleaved in batches of SELECTION_BATCH iterations, up to `harness.iterations // 2` in
    all; after each batch a contender whose fastest call so far is slower than CLEARLY_SLOWER times the best
    contender's median is dropped (its median, over the calls it had, is still reported). Contenders within noise of
    each other are never dropped that way, so they are compared over every iteration; a clearly slower one stops
    costing its calls (a second Mamba scan 1.2-1.7x slower than mambapy took 0.7-1.8 s a case on the H200).
    `eager` (harness.time_eager) is timed after them for the record (docs/baselines.md), never chosen."""
    iterations = max(3, ctx.harness.iterations // 2)
    flush = ctx.flush
    prepare = (lambda name, index, inputs: flush()) if flush is not None else None
    label = f"{ctx.plan.manifest.name}/{ctx.case_name}"
    medians: dict[str, float] = {}
    chosen = next(iter(baselines))
    if len(baselines) > 1:
        contenders = {name: caller(module) for name, module in baselines.items()}
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        done = 0
        while len(contenders) > 1 and done < iterations:
            batch = time_interleaved(contenders, continuing(sets, done), ctx.clock,
                                     ctx.harness.warmup if done == 0 else 0, min(SELECTION_BATCH, iterations - done),
                                     f"{label}/select", prepare=prepare)
            for name, values in batch.items():
                samples[name] += values
            done += len(next(iter(batch.values())))
            best = min(summarize(samples[name]).median_ms for name in contenders)
            contenders = {name: call for name, call in contenders.items()
                          if min(samples[name]) <= CLEARLY_SLOWER * best}
        medians = {name: summarize(values).median_ms for name, values in samples.items()}
        chosen = min(contenders, key=medians.__getitem__)
    if eager is not None:
        medians["eager"] = time_eager(ctx, eager, sets, iterations, f"{label}/eager", prepare)
    return chosen, medians


def time_eager(ctx: CaseContext, eager: torch.nn.Module, sets, iterations: int, label: str, prepare) -> float:
    """The eager module's median over at least 4 calls, more while `harness.eager_timing_s` lasts (up to
    `iterations`): on a launch pad of its own, since a module that loops over a sequence in Python keeps the host
    busy for milliseconds a call, and a pad shared with the production contenders would grow to cover that."""
    call = {"eager": caller(eager)}
    started = time.perf_counter()
    times = time_interleaved(call, sets, ctx.clock, 1, 4, label, prepare=prepare)["eager"]
    while len(times) < iterations and time.perf_counter() - started < ctx.harness.eager_timing_s:
        batch = time_interleaved(call, continuing(sets, len(times)), ctx.clock, 0, 2, label, prepare=prepare)
        times += batch["eager"]
    return summarize(times).median_ms


def caller(module) -> Callable[[Inputs], Any]:
    def call(inputs: Inputs) -> Any:
        return module(**inputs)

    return call

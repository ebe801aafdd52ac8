"""CUDA-graph timing: production replays small kernels from graphs, so launch overhead is not the kernel's cost.

Every implementation is captured `graph_captures` times (A0 B0 B1 A1 ..., each capture its own memory pool; raised
up to `graph_captures_max` while the speedup's interval stays wide, see graph_fields) on the same static input
tensors (a graph holds their addresses), so baseline and candidate read the same memory, as they do in eager timing.
Several captures because a replay's speed is drawn at capture: on the H200 (2026-11-30,
`scripts/diagnose_noop.py --graphs 3`) three captures of one softmax module replayed at 12.58, 12.93 and 13.41 us,
as far apart as captures of two instances, and one capture a side put noop graph speedups at 0.94. Timed iteration i
replays capture i mod K of both sides, so the estimate averages over K draws per side, and the speedup's interval
resamples captures as well as replays (`speedup_ci95(clusters=K)`). Every timed replay is preceded (untimed) by
fresh values written into the inputs and the cache flush, like the eager protocol. Timed candidate replays picked at
random in every batch are judged by the judge process when the batch ends (checks.TimedRecheck, as in eager
timing), and the first batch's picks take one replay of every capture, so each capture is judged on fresh inputs:
a graph's kernels can keep state on the device (a replay counter), so a capture right on its first replay may skip
its work on the later ones, which only a check of a timed replay sees. (Until the twelfth session each capture was
also judged on an untimed first replay: 8 more oracle calls a case, 0.1-0.7 s each where the eager oracle is a
float64 loop, as the twelfth session's H200 worker logs show.) Work that keeps the device busy after a replay's stream
finished (a thread the candidate started, on its own stream) is caught as in eager timing (StreamEscape). A module
that cannot be captured (host syncs, found before a capture is tried; data-dependent shapes, allocations the capture
forbids) is reported as such, never failed: graphs are a mode of measurement, not a requirement of the task.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import torch

from fastkernels.capture import Captured, capture
from fastkernels.checks import CaseFailure, JudgeFresh, RecheckJudge, TimedRecheck, clone, time_rechecked
from fastkernels.config import HarnessConfig
from fastkernels.manifest import Case, Manifest
from fastkernels.phases import phase
from fastkernels.records import CallTimes
from fastkernels.stream_escape import StreamEscape, verify_escape
from fastkernels.timing import Clock, pad_note, paired_speedup, speedup_ci95, summarize

Inputs = dict[str, torch.Tensor]
T = TypeVar("T")


def graph_fields(
    manifest: Manifest, case: Case, modules: dict[str, Callable[..., Any] | Sequence[Callable[..., Any]]],
    example: Inputs, judge_fresh: JudgeFresh, ledger: RecheckJudge,
    clock: Clock, flush: Callable[[], None] | None, warmup: int, iterations: int,
    repetition: HarnessConfig, baseline_name: str = "baseline",
    fallbacks: Sequence[tuple[str, Callable[..., Any]]] = (),
) -> dict[str, Any]:
    """Graph-replay medians for baseline and candidate and the paired speedup over `graph_captures` captures a side,
    repeated adaptively and rechecked like eager timing (`repetition`: target_ci, iteration_cap, max_timing_s,
    rechecks, seed, keep_call_times), or a note saying which was not capturable.

    Where the speedup's interval is still wider than +-target_ci, the captures are doubled, as often as its width
    asks (up to `graph_captures_max`, as memory allows), and all of them timed afresh, while another round of
    replays as long as the last fits the phase's time cap: the interval resamples captures, so only more captures
    narrow it. The row reports the last round; earlier rounds' rechecks and stream-escape checks count all the same.

    Production runs graphs only with what can be captured: where the chosen baseline cannot be (Liger's MoE syncs
    with the host), the next correct production implementation of `fallbacks` (fastest eager first) that can serves
    the graph comparison, and `graph_baseline_impl` names whichever did."""
    static = clone(example)
    served, sides = baseline_name, modules
    captures, failures = _capture_all(sides, static, repetition.graph_captures)
    notes = {_named(failure, served): None for failure in failures}
    for name, module in fallbacks:
        if "baseline" in captures:
            break
        # the candidate is captured again with the fallback, so the two sides' captures stay interleaved
        served, sides = name, {**modules, "baseline": module}
        captures, failures = _capture_all(sides, static, repetition.graph_captures)
        notes.update({_named(failure, served): None for failure in failures})
    if "baseline" not in captures:
        return {"graph_note": "; ".join(notes)}
    label = f"{manifest.name}/{case.name}"
    phase(f"{label}: graphs captured ({len(captures['baseline'])} a side)")
    started = time.perf_counter()
    timed = _time_captures(manifest, case, captures, static, judge_fresh, ledger, clock, flush, warmup, iterations,
                           repetition, label)
    while (wider := _wider_than_target(timed, repetition)) is not None:
        count = len(captures["baseline"])
        wanted = _captures_wanted(count, wider, repetition)
        if wanted <= count or (time.perf_counter() - started) + timed.seconds > repetition.max_timing_s:
            break  # no room for more captures, or no time for another round of replays as long as the last
        more, failures = _capture_all(sides, static, wanted, start=count)
        if failures or set(more) != set(captures):
            break  # a side that refuses more captures keeps the ones it was timed on
        for name, added in more.items():
            captures[name].extend(added)
        phase(f"{label}: graph captures raised to {len(captures['baseline'])} a side (the interval was"
              f" +-{wider:.1%} over {count})")
        timed = _time_captures(manifest, case, captures, static, judge_fresh, ledger, clock, flush, warmup, iterations,
                               repetition, label)
        if len(captures["baseline"]) < wanted:
            break  # memory allowed fewer: no further round
    samples = timed.samples
    if timed.escape_note:
        notes[timed.escape_note] = None
    fields: dict[str, Any] = {"baseline_graph_ms": summarize(samples["baseline"]).median_ms,
                              "graph_note": "; ".join(notes),
                              "graph_captures": len(captures["baseline"]), "graph_baseline_impl": served,
                              "graph_sync_lag_ms": timed.lags}
    if repetition.keep_call_times:  # `input_sets`: the captures a side
        fields["graph_call_times"] = timed.record
    if "candidate" in samples:
        fields["candidate_graph_ms"] = summarize(samples["candidate"]).median_ms
        fields["graph_speedup"] = paired_speedup(samples["baseline"], samples["candidate"])
        fields["graph_speedup_ci95"] = speedup_ci95(samples["baseline"], samples["candidate"], seed=repetition.seed,
                                                    clusters=len(captures["baseline"]))
    return fields


@dataclass
class _Timed:
    samples: dict[str, tuple[float, ...]]
    record: CallTimes
    lags: tuple[float, float] | None  # StreamEscape.lags
    seconds: float  # the round's wall time: replays, pads, flushes and rechecks
    escape_note: str = ""  # StreamEscape.note: replays set aside for a fresh batch, which cleared them


def _time_captures(
    manifest: Manifest, case: Case, captures: dict[str, list[Captured]], static: Inputs, judge_fresh: JudgeFresh,
    ledger: RecheckJudge, clock: Clock, flush: Callable[[], None] | None, warmup: int, iterations: int,
    repetition: HarnessConfig, label: str,
) -> _Timed:
    """One round of timed replays over every capture: adaptive batches, rechecked, stream-escape checked."""
    started = time.perf_counter()
    count = len(captures["baseline"])
    # fresh input values and the cache flush before every timed replay, and the picked candidate replays kept; the
    # first batch rechecks a timed replay of every candidate capture: each capture is judged on fresh inputs
    recheck = TimedRecheck(manifest, case, "cuda", iterations, repetition.rechecks, flush, ledger, cover=count)
    escape = StreamEscape(clock)
    calls = {name: (lambda k, c=captured: c[k].graph.replay()) for name, captured in captures.items()}

    def prepare(name: str, index: int, _: Any) -> None:
        recheck.prepare(name, index, static)

    def observe(name: str, index: int, capture_index: int, _: Any) -> None:  # a replay returns nothing
        recheck.observe(name, index, static, captures[name][capture_index].output)
        escape.observe(name, index, static, None)

    # the "sets" rotated over are the captures: overall, iteration i replays capture i mod count of both sides
    samples, record, judging_s = _under_graphs(lambda: time_rechecked(
        calls, range(count), clock, recheck, judge_fresh, repetition, "cuda", warmup, iterations,
        f"{label}/graph", prepare, observe, lambda: escape.start_confirmation("side_streams" in manifest.allow)))
    phase(f"{label}: graph replays timed ({len(samples['baseline'])} pairs, {judging_s:.2f} s of it judging"
          f" rechecks{pad_note(clock, f'{label}/graph')})")
    _under_graphs(lambda: verify_escape(escape, "side_streams" in manifest.allow, clock,
                                        len(samples.get("candidate", ()))))
    return _Timed(samples, record, escape.lags(), time.perf_counter() - started, escape.note())


def _captures_wanted(count: int, wider: float, repetition: HarnessConfig) -> int:
    """The captures a side the next round needs: `count` doubled as often as the interval's width asks (it narrows
    as one over the square root of the captures: +-2.8% over 8 asks for 64, +-1.1% for 16), at most
    `graph_captures_max`; `count` itself where even twice as many would pass that."""
    most = repetition.graph_captures_max
    if count * 2 > most:
        return count
    wanted = count * 2
    while wanted * 2 <= most and (wider / repetition.target_ci) ** 2 * count > wanted:
        wanted *= 2
    return wanted


def _wider_than_target(timed: _Timed, repetition: HarnessConfig) -> float | None:
    """The graph speedup's interval half-width relative to it where wider than +-target_ci, else None."""
    samples = timed.samples
    if "candidate" not in samples:
        return None
    low, high = speedup_ci95(samples["baseline"], samples["candidate"], seed=repetition.seed,
                             clusters=timed.record.input_sets)
    wider = (high - low) / 2 / paired_speedup(samples["baseline"], samples["candidate"])
    return wider if wider > repetition.target_ci else None


def _under_graphs(check: Callable[[], T]) -> T:
    """Run the timed replays or a check of them; a failure says it happened under CUDA graph replay."""
    try:
        return check()
    except CaseFailure as failure:
        raise CaseFailure(failure.status, f"under CUDA graph replay: {failure.reason}", failure.metrics) from None


def _named(failure: str, baseline_name: str) -> str:
    """A capture failure note with the baseline named by its implementation."""
    return failure.replace("baseline not capturable", f"baseline {baseline_name} not capturable", 1)


def _capture_all(modules: dict[str, Callable[..., Any] | Sequence[Callable[..., Any]]], static: Inputs, wanted: int,
                 start: int = 0) -> tuple[dict[str, list[Captured]], list[str]]:
    """Rounds `start` to `wanted` - 1 of captures of every capturable module, interleaved with the order turned round
    every round (A0 B0 B1 A1 A2 B2 ...), so neither side is always captured first (H200, 2026-12-02: two cuBLAS noop
    rows read 0.983 and 0.989 replayed, tight intervals, with the baseline first in every round, against 0.997 and
    0.998 eager; that the order caused it is not shown, and over all rows it moved nothing). A side given as several
    instances (harness.instances) captures instance k mod N in round k, so a later call with `start` continues the
    rotation and the turning. This call's first round's reserved memory sizes the rest: at most as many more rounds
    as fit in a quarter of the free device memory (at least one round in all). Returns the captures this call made
    and one note per module that could not be captured."""
    captures: dict[str, list[Captured]] = {}
    failures: dict[str, str] = {}
    rounds = wanted
    done = start
    while done < rounds:
        before = torch.cuda.memory_reserved()
        for name, side in (list(modules.items()) if done % 2 == 0 else list(modules.items())[::-1]):
            if name in failures:
                continue
            captured = capture(side[done % len(side)] if isinstance(side, (list, tuple)) else side, static)
            if isinstance(captured, str):
                failures[name] = captured
            else:
                captures.setdefault(name, []).append(captured)
        done += 1
        if done == start + 1:  # size the rest by what the first round reserved
            per_round = max(torch.cuda.memory_reserved() - before, 1)
            rounds = max(start + 1, min(wanted, done + int(0.25 * torch.cuda.mem_get_info()[0] // per_round)))
    for name in failures:  # a module that refused any capture is not capturable (a partial set would not pair up)
        captures.pop(name, None)
    if "baseline" not in captures:
        captures.pop("candidate", None)
    return captures, [f"{name} not capturable: {reason}" for name, reason in failures.items()]

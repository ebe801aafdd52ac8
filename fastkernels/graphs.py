"""CUDA-graph timing: production replays small kernels from graphs, so launch overhead is not the kernel's cost.

Every implementation is captured once on the same static input tensors (a graph holds their addresses), so baseline
and candidate read the same memory, as they do in eager timing; every timed replay is preceded (untimed) by fresh
values written into those inputs and the cache flush, like the eager protocol. The graph's output is
checked by the judge process once, after a replay on fresh inputs. A module that cannot be captured (host syncs,
data-dependent shapes, allocations the capture forbids) is reported as such, never failed: graphs are a mode of
measurement, not a requirement of the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from fastkernels.checks import CaseFailure, JudgeFresh, clone
from fastkernels.config import HarnessConfig
from fastkernels.inputs import generator, refill_inputs, unpredictable_seed
from fastkernels.manifest import Case, Manifest
from fastkernels.plan import one_line
from fastkernels.records import Status
from fastkernels.timing import Clock, extend_until_tight, paired_speedup, summarize, time_interleaved

Inputs = dict[str, torch.Tensor]


@dataclass
class Captured:
    graph: torch.cuda.CUDAGraph
    inputs: Inputs
    output: Any


def capture(module: Callable[..., Any], static: Inputs, warmup: int = 3) -> Captured | str:
    """The module's forward captured on the `static` input tensors, or why it cannot be captured."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                module(**static)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = module(**static)
        torch.cuda.synchronize()
        return Captured(graph, static, output)
    except Exception as error:  # noqa: BLE001 - not capturable is an outcome, reported in the row
        torch.cuda.synchronize()
        return one_line(error)


def graph_fields(
    manifest: Manifest, case: Case, modules: dict[str, Callable[..., Any]], example: Inputs, judge_fresh: JudgeFresh,
    clock: Clock, flush: Callable[[], None] | None, warmup: int, iterations: int,
    seed: int, repetition: HarnessConfig,
) -> dict[str, Any]:
    """Graph-replay medians for baseline and candidate and the paired speedup, repeated adaptively like eager timing
    (`repetition`: target_ci, max_iterations, max_timing_s), or a note saying which was not capturable."""
    static = clone(example)
    captured = {name: capture(module, static) for name, module in modules.items()}
    notes = "; ".join(f"{name} not capturable: {c}" for name, c in captured.items() if isinstance(c, str))
    graphs: dict[str, Captured] = {name: c for name, c in captured.items() if not isinstance(c, str)}
    if "baseline" not in graphs:
        return {"graph_note": notes}
    if "candidate" in graphs:
        check = graphs["candidate"]
        refill_inputs(manifest, case, check.inputs, generator("cuda", unpredictable_seed()))
        # The judge sees the inputs as they were before the replay: a task may rotate them in place (`mutates`).
        given = clone(check.inputs)
        check.graph.replay()
        torch.cuda.synchronize()
        verdict = judge_fresh(given, check.output)
        if not verdict.passed:
            raise CaseFailure(Status.REWARD_HACK, f"wrong under CUDA graph replay: {verdict.reason}", verdict.metrics)

    def prepare(name: str, index: int, _: Any) -> None:
        refill_inputs(manifest, case, graphs[name].inputs, generator("cuda", unpredictable_seed()))
        if flush is not None:
            flush()

    calls = {name: (lambda _, g=graphs[name].graph: g.replay()) for name in graphs}
    label = f"{manifest.name}/{case.name}/graph"
    samples = time_interleaved(calls, [None], clock, warmup, iterations, label, prepare=prepare)
    samples = extend_until_tight(
        samples, lambda count: time_interleaved(calls, [None], clock, 0, count, label, prepare=prepare),
        repetition.target_ci, repetition.max_iterations, repetition.max_timing_s, seed)
    fields: dict[str, Any] = {"baseline_graph_ms": summarize(samples["baseline"]).median_ms, "graph_note": notes}
    if "candidate" in samples:
        fields["candidate_graph_ms"] = summarize(samples["candidate"]).median_ms
        fields["graph_speedup"] = paired_speedup(samples["baseline"], samples["candidate"])
    return fields

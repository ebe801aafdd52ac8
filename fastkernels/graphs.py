"""CUDA-graph timing: production replays small kernels from graphs, so launch overhead is not the kernel's cost.

Each implementation is captured once on static input tensors; every timed replay is preceded (untimed) by fresh
values written into those static inputs and the cache flush, like the eager protocol. The graph's output is
checked against the oracle once, after a replay on fresh inputs. A module that cannot be captured (host syncs,
data-dependent shapes, allocations the capture forbids) is reported as such, never failed: graphs are a mode of
measurement, not a requirement of the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from fastkernels.checks import CaseFailure, clone
from fastkernels.config import Tolerance
from fastkernels.correctness import judge
from fastkernels.inputs import generator, refill_inputs, stream_seed
from fastkernels.manifest import Case, Manifest
from fastkernels.plan import one_line
from fastkernels.build import oracle_inputs
from fastkernels.records import Status
from fastkernels.timing import Clock, summarize, time_interleaved

Inputs = dict[str, torch.Tensor]


@dataclass
class Captured:
    graph: torch.cuda.CUDAGraph
    inputs: Inputs
    output: Any


def capture(module: Callable[..., Any], example: Inputs, warmup: int = 3) -> Captured | str:
    """The module's forward captured on static copies of `example`, or why it cannot be captured."""
    static = clone(example)
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
    manifest: Manifest, case: Case, modules: dict[str, Callable[..., Any]], example: Inputs, oracle: Callable[..., Any],
    template: Any, tolerance: Tolerance, clock: Clock, flush: Callable[[], None] | None, warmup: int, iterations: int,
    seed: int,
) -> dict[str, Any]:
    """Graph-replay medians for baseline and candidate (and their ratio), or a note saying which was not capturable."""
    captured = {name: capture(module, example) for name, module in modules.items()}
    notes = "; ".join(f"{name} not capturable: {c}" for name, c in captured.items() if isinstance(c, str))
    graphs: dict[str, Captured] = {name: c for name, c in captured.items() if not isinstance(c, str)}
    if "baseline" not in graphs:
        return {"graph_note": notes}
    if "candidate" in graphs:
        check = graphs["candidate"]
        refill_inputs(manifest, case, check.inputs, generator("cuda", stream_seed(seed, manifest.name, case.name, "graph")))
        # The oracle sees the inputs before the replay: a task may rotate its inputs in place (`mutates`).
        expected = oracle(**oracle_inputs(clone(check.inputs)))
        check.graph.replay()
        torch.cuda.synchronize()
        verdict = judge(check.output, template, expected, tolerance.atol, tolerance.rtol)
        if not verdict.passed:
            raise CaseFailure(Status.REWARD_HACK, f"wrong under CUDA graph replay: {verdict.reason}", verdict.metrics)

    def prepare(name: str, index: int, _: Any) -> None:
        gen = generator("cuda", stream_seed(seed, manifest.name, case.name, "graph-call", index, name))
        refill_inputs(manifest, case, graphs[name].inputs, gen)
        if flush is not None:
            flush()

    calls = {name: (lambda _, g=graphs[name].graph: g.replay()) for name in graphs}
    samples = time_interleaved(calls, [None], clock, warmup, iterations, f"{manifest.name}/{case.name}/graph",
                               prepare=prepare)
    fields: dict[str, Any] = {"baseline_graph_ms": summarize(samples["baseline"]).median_ms, "graph_note": notes}
    if "candidate" in samples:
        fields["candidate_graph_ms"] = summarize(samples["candidate"]).median_ms
        fields["graph_speedup"] = fields["baseline_graph_ms"] / fields["candidate_graph_ms"]
    return fields

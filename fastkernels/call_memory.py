"""How much device memory one call allocates beyond what was held before it: its outputs, workspaces and
temporaries, as torch's caching allocator counts them (a library that calls cudaMalloc itself goes uncounted).

Why: whether a kernel is worth deploying depends on its memory as well as its time. A candidate that is 2x faster
but allocates a gigabyte of scratch a call may not fit beside a model's activations. The row's `call_mib` puts the
two sides' figures side by side. It is measured once a side, outside the timed calls, on the first instance and the
first input set, before timing, so that the integrity checks during timing also cover that extra candidate call."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import torch

Inputs = dict[str, torch.Tensor]


def call_mib(call: Callable[[], Any]) -> float:
    """MiB that `call()` allocated at its peak beyond what was allocated when it started (CUDA only)."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    result = call()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    del result
    return round(max(peak - before, 0) / 2**20, 3)


class CallFailed(Exception):
    """The call of `side` ("baseline" or "candidate") raised while its memory was measured (the cause chained)."""

    def __init__(self, side: str) -> None:
        super().__init__(side)
        self.side = side


def sides_call_mib(sides: Mapping[str, Sequence[Callable[..., Any]]], inputs: Inputs) -> tuple[float, float | None]:
    """(baseline, candidate) `call_mib` of each side's first instance on `inputs`; candidate None without one.
    CallFailed names the side whose call raised."""
    measured: dict[str, float] = {}
    with torch.no_grad():
        for side in ("baseline", "candidate"):
            if side in sides:
                try:
                    measured[side] = call_mib(lambda: sides[side][0](**inputs))
                except Exception as error:
                    raise CallFailed(side) from error
    return measured["baseline"], measured.get("candidate")

"""What Inductor did during an implementation's first calls: FX graph cache hits and misses, autotuning benchmarks.

Under max-autotune every compile that misses the caches benchmarks launch configurations again and can settle on
another one, so two instances of one implementation can differ by several percent (noop rows on the H200,
2026-11-30). The worker log names these events per implementation, so a noop row away from 1 shows whether its
candidate compiled afresh. Read from Dynamo's process-wide counters; nothing here changes what is compiled.
"""

from __future__ import annotations

# The counters that tell a cache hit from a fresh compile, say how much autotuning it ran, and whether Dynamo gave
# up compiling a function (past its recompile limit it runs the function eagerly: a compiled baseline gone eager).
RECOMPILE_LIMIT_HIT = "recompile_limit_hit"
SHOWN = ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass", "autograd_cache_hit",
         "autograd_cache_miss", "coordesc_tuning_bench", "benchmark_gpu", RECOMPILE_LIMIT_HIT)
_RECOMPILE_LIMIT = "Dynamo recompile limit exceeded"  # how Dynamo's `unimplemented` counter names it


def inductor_counters() -> dict[str, int]:
    """A snapshot of Dynamo's `inductor` and `aot_autograd` counters, and of its recompile-limit hits as
    `recompile_limit_hit` ({} where torch has none)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return {}
    found = {key: int(value) for group in ("inductor", "aot_autograd")
             for key, value in counters.get(group, {}).items()}
    hits = sum(int(value) for key, value in counters.get("unimplemented", {}).items()
               if key.startswith(_RECOMPILE_LIMIT))
    if hits:
        found[RECOMPILE_LIMIT_HIT] = hits
    return found


def events_since(before: dict[str, int]) -> dict[str, int]:
    """How much each SHOWN counter grew since `before` (a snapshot of `inductor_counters`), the ones that did."""
    grown: dict[str, int] = {}
    for key, value in inductor_counters().items():
        shown = next((name for name in SHOWN if key.endswith(name)), None)
        if shown is not None and value > before.get(key, 0):
            grown[shown] = grown.get(shown, 0) + value - before.get(key, 0)
    return grown


def describe(events: dict[str, int]) -> str:
    """`events` for a log line: `name +n`, by name, joined by commas ("" when there are none)."""
    return ", ".join(f"{name} +{count}" for name, count in sorted(events.items()))

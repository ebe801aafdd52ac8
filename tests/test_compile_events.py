"""The worker log says what Inductor did in each implementation's first calls: which FX graph cache events and
autotuning benchmarks Dynamo's counters gained, so a noop candidate that compiled afresh (and may have autotuned
to another configuration than its baseline) shows in the log beside its row."""

from __future__ import annotations

from torch._dynamo.utils import counters

from fastkernels.compile_events import describe, events_since, inductor_counters


def test_only_the_counters_that_grew_are_named_with_their_growth():
    before = inductor_counters()
    counters["inductor"]["fxgraph_cache_miss"] += 1
    counters["inductor"]["InductorBenchmarker.benchmark_gpu"] += 9
    counters["inductor"]["coordesc_tuning_bench"] += 6
    counters["inductor"]["pattern_matcher_count"] += 1  # not a cache or autotuning event: left out
    assert describe(events_since(before)) == "benchmark_gpu +9, coordesc_tuning_bench +6, " \
                                   "fxgraph_cache_miss +1"


def test_nothing_compiled_says_nothing():
    before = inductor_counters()
    counters["inductor"]["pattern_matcher_nodes"] += 4
    assert describe(events_since(before)) == ""


def test_a_cache_hit_and_aot_autograds_hit_are_named():
    before = inductor_counters()
    counters["inductor"]["fxgraph_cache_hit"] += 1
    counters["aot_autograd"]["autograd_cache_hit"] += 1
    assert describe(events_since(before)) == "autograd_cache_hit +1, fxgraph_cache_hit +1"


def test_a_function_dynamo_stopped_compiling_past_its_recompile_limit_is_named():
    """Past the limit Dynamo runs the function eagerly: a compiled baseline would be timed as plain PyTorch."""
    import torch

    @torch.compile(dynamic=False, backend="eager")
    def double(x):
        return x * 2

    before = inductor_counters()
    with torch._dynamo.config.patch(recompile_limit=1):
        double(torch.ones(1))
        double(torch.ones(2))
    assert events_since(before) == {"recompile_limit_hit": 1}

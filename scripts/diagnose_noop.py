"""Why does a noop row move? Times one production implementation against itself in ways that separate the causes.

A noop row compares the chosen baseline with a second instance of it. When that speedup sits away from 1 with a
tight interval, the difference is between the instances, not noise. On the H200 (2026-11-30): once
timestep_embedding's 1.10-1.13 under Inductor was traced to Dynamo's shared guard cache and fixed
(fastkernels.compiled), its comparisons below all read 0.996-1.000; inverted_residual's first-built instance is
0.4-0.7% faster in either role; embedding/llama31_8b_decode_1 read 1.08-1.10 A against A: one call in every four
ran 15% slower, at a fixed place in the call sequence, so under strict A B, B A alternation it always hit the same
one (the harness now draws each pair's order; docs/measurement.md). Every comparison below but `drawn` alternates
strictly and prints the median time of the calls at each of the four places of the cycle (first, second | second,
first) to show such a pattern. This script times, with the harness's own clock, cache flush and paired estimator:

  same      A vs A      one instance twice: the harness's own floor (should be 1 within the interval)
  refilled  A vs A      the same, with fresh input values before every call as the harness's timed calls have
  drawn     A vs A      refilled, with each pair's order drawn at random as the harness does: should read 1
  instances A vs B      A built first, B second (the noop row's situation)
  swapped   B vs A      roles swapped: an instance effect inverts, a role effect does not
  fresh     A vs C      C built after A and B were timed (is it build order, or something that ages?)
  relocated A' vs B     A with every parameter and buffer copied to new memory: when this moves away from
                        `instances`, where the weights sit (not the module object) is the difference
  harness   A vs B      instances under the harness's conditions (fresh values before every call, drawn orders)
  lottery   A vs D_k    --lottery K more instances, each built and timed as `harness`: a spread of their speedups
                        wider than each one's interval means an instance's speed is drawn when it is built (where
                        its code and memory land), which no estimator over one pair of instances can average out
  first calls           each instance's first call in seconds (compiling, autotuning) and what Inductor's caches
                        did meanwhile (FX graph cache hits and misses, autotuning benchmarks): a second instance
                        that compiles and benchmarks again can draw another configuration than the first
  configs               --configs: the launch configuration Inductor's runtime autotuner settled on for every
                        Triton kernel of every instance, after the comparisons (instances of a compiled class share
                        one compiled function since 2026-11-30, so one set; private copies under max-autotune could
                        tune again and differ: then the noop row was an autotuning draw)
  kernels   A vs B      --kernels N: A and B profiled over N calls each (torch.profiler, a cache flush before each
                        call), every kernel's time a call side by side, largest difference first: which kernel
                        carries an instance difference (convnext_block's two speeds, 2026-12-02, are the reason)
  graph     A0 vs X_k   --graphs K: A and B each captured K times into CUDA graphs (each capture its own memory
                        pool, all on one set of static inputs, as graphs.py captures), every capture replayed against
                        A's first as the harness times graphs: when captures of one instance differ as much as
                        captures of the two, the graph's speed is drawn at capture (where its pool lands); first,
                        the kernels each capture replays and their time (a library that picked another algorithm
                        at capture shows as another kernel name)

With --after-others every other production implementation of the task is built and called first, as the harness's
baseline check does before it builds the noop candidate (under Inductor, `torch_compile` before
`torch_compile_max_autotune` compiles the same graph with other settings).

Usage: python scripts/diagnose_noop.py TASK CASE [--impl NAME] [--iterations 400] [--pad-us 50] [--lottery K]
       [--graphs K] [--configs] [--after-others] [--kernels N]
(on a GPU: the case's real shapes; on the CPU: pass a cpu case; the host clock then times the host too).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.build import build, reference_state  # noqa: E402
from fastkernels.cache import cache_flush  # noqa: E402
from fastkernels.compile_events import describe, events_since, inductor_counters  # noqa: E402
from fastkernels.config import BaselineConfig  # noqa: E402
from fastkernels.inputs import generator, make_inputs, refill_inputs, stream_seed, unpredictable_seed  # noqa: E402
from fastkernels.plan import Impl, plan_task  # noqa: E402
from fastkernels.registry import Registry, UnknownTaskError  # noqa: E402
from fastkernels.timing import ALTERNATE, CudaEventClock, HostClock, paired_speedup, speedup_ci95, time_interleaved  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("case")
    parser.add_argument("--impl", help="production implementation (default: the first available)")
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--pad-us", type=float, default=50.0, help="the clock's first launch pad (it adapts)")
    parser.add_argument("--lottery", type=int, default=0, metavar="K", help="K more instances timed against A")
    parser.add_argument("--graphs", type=int, default=0, metavar="K", help="K CUDA-graph captures of A and of B")
    parser.add_argument("--configs", action="store_true", help="print the autotuner's picks per instance")
    parser.add_argument("--kernels", type=int, default=0, metavar="N",
                        help="profile N calls of A and of B: each kernel's time a call, side by side")
    parser.add_argument("--after-others", action="store_true",
                        help="build and call the task's other production implementations first, as the harness does")
    args = parser.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    plan, impl, case = chosen_case(parser, args, device)
    manifest = plan.manifest
    state = reference_state(manifest, case, plan.eager.cls, plan.eager.components, device, 0)

    def instance(who: str, other: Impl | None = None) -> torch.nn.Module:
        """`impl` (or `other`) built, then called once: the first call's seconds and Inductor's events printed."""
        chosen = other or impl
        module = build(chosen.cls, case, chosen.components, state, device, who)
        before = inductor_counters()
        start = time.perf_counter()
        with torch.no_grad():
            module(**sets[0])
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        changed = describe(events_since(before))
        print(f"first call {who:3s} ({chosen.name}): {seconds:.3f} s; inductor counters {changed or 'unchanged'}",
              flush=True)
        return module

    sets = [make_inputs(manifest, case, device, generator(device, stream_seed(0, manifest.name, case.name, "timing", k)))
            for k in range(4)]
    clock = CudaEventClock(args.pad_us) if device == "cuda" else HostClock(None)
    flush, note = cache_flush(device, 60.0 if device == "cuda" else 32.0)

    def compare(label: str, first: torch.nn.Module, second: torch.nn.Module, refill: bool = False,
                drawn: bool = False) -> float:
        calls = {"first": lambda inputs: first(**inputs), "second": lambda inputs: second(**inputs)}
        if first is second:  # one instance under two names: the calls alternate exactly as two instances would
            calls = {"first": calls["first"], "second": lambda inputs: first(**inputs)}

        def prepare(name: str, index: int, inputs: dict) -> None:
            if refill:  # the harness's timed calls: fresh values in the rotated buffers before every call
                refill_inputs(manifest, case, inputs, generator(device, unpredictable_seed()))
            flush()

        with torch.no_grad():
            samples = time_interleaved(calls, sets, clock, 10, args.iterations, f"diagnose/{label}", prepare=prepare,
                                       order_rng=None if drawn else ALTERNATE)
        speedup = paired_speedup(samples["first"], samples["second"])
        low, high = speedup_ci95(samples["first"], samples["second"])
        medians = {name: float(np.median(values)) * 1e3 for name, values in samples.items()}
        detail = ""
        if not drawn:  # calls ran first, second | second, first | ...: position k of every four calls
            f, s_ = np.asarray(samples["first"]) * 1e3, np.asarray(samples["second"]) * 1e3
            cycle = [f[0::2], s_[0::2], s_[1::2], f[1::2]]
            detail = "; calls by position in each four: " + " ".join(f"{np.median(c):.2f}" for c in cycle) + " us"
        print(f"{label:9s} speedup {speedup:.4f} [{low:.4f}, {high:.4f}]  first {medians['first']:.2f} us,"
              f" second {medians['second']:.2f} us{detail}", flush=True)
        return speedup

    print(f"{args.task}/{args.case} impl {impl.name} on {device} ({clock.name}; {note})")
    if args.after_others:
        for k, other in enumerate(i for i in plan.baselines if i is not impl):
            instance(f"O{k}", other)
    a = instance("A")
    b = instance("B")
    compare("same", a, a)
    compare("refilled", a, a, refill=True)
    compare("drawn", a, a, refill=True, drawn=True)
    compare("instances", a, b)
    compare("swapped", b, a)
    if args.kernels:
        compare_kernels({"A": a, "B": b}, sets[0], args.kernels, flush, device)
    compare("fresh", a, instance("C"))
    with torch.no_grad():  # new storage for A's tensors, same values, same module object
        for tensor in [*a.parameters(), *a.buffers()]:
            tensor.data = tensor.data.clone()
    compare("relocated", a, b)
    compare("harness", a, b, refill=True, drawn=True)
    others = {f"D{k}": instance(f"D{k}") for k in range(args.lottery)}
    draws = [compare(f"lottery{k}", a, other, refill=True, drawn=True) for k, other in enumerate(others.values())]
    if draws:
        print(f"lottery: {len(draws)} instances against A, speedups {min(draws):.4f}..{max(draws):.4f}, "
              f"median {float(np.median(draws)):.4f}")
    if args.configs:
        print_configs()
    if args.graphs and device == "cuda":
        compare_captures(manifest, case, {"A": a, "B": b}, sets[0], args.graphs, clock, flush, args.iterations)
    return 0


def chosen_case(parser: argparse.ArgumentParser, args: argparse.Namespace, device: str) -> tuple[Any, Impl, Any]:
    """`args.task`'s plan, the production implementation `args.impl` names (the first available by default) and
    `args.case`, or the parser's one-line error naming what is unknown (diagnoses of one case share this)."""
    try:
        plan = plan_task(Registry(), args.task, device, BaselineConfig(name="production"), None, "independent")
    except UnknownTaskError as error:
        parser.error(str(error))
    impl = next((i for i in plan.baselines if i.name == args.impl), None) if args.impl else plan.baselines[0]
    if impl is None:
        parser.error(f"{args.task} has no available production implementation {args.impl!r}: "
                     f"{[i.name for i in plan.baselines]}")
    try:
        case = plan.manifest.case(args.case)
    except KeyError as error:
        parser.error(str(error.args[0]))
    return plan, impl, case


def compare_kernels(modules: dict[str, torch.nn.Module], inputs: dict, calls: int, flush, device: str) -> None:
    """Which kernel makes one instance slower than another: each module profiled over `calls` calls (a cache flush
    before each, as timed calls have), every kernel's own time a call (device time on a GPU, the ops' own CPU time
    on the CPU), side by side, the largest differences first. The flush's own kernels appear on both sides alike."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    times: dict[str, dict[str, float]] = {}
    for who, module in modules.items():
        with torch.no_grad(), profile(activities=activities) as profiled:
            for _ in range(calls):
                flush()
                module(**inputs)
            if device == "cuda":
                torch.cuda.synchronize()
        times[who] = kernel_times(profiled.key_averages(), device, calls)
    (first, a), (second, b) = times.items()
    names = sorted(set(a) | set(b), key=lambda name: -abs(a.get(name, 0.0) - b.get(name, 0.0)))
    print(f"kernels over {calls} calls a side ({'device' if device == 'cuda' else 'own CPU'} us a call; "
          f"{first} total {sum(a.values()):.2f}, {second} total {sum(b.values()):.2f}), largest difference first:")
    for name in names[:15]:
        ratio = b.get(name, 0.0) / a[name] if a.get(name) else float("nan")
        print(f"  kernel {a.get(name, 0.0):10.2f} {b.get(name, 0.0):10.2f} {ratio:7.4f}  {name[:100]}", flush=True)


def kernel_times(averages, device: str, calls: int) -> dict[str, float]:
    """Profiler averages -> name: microseconds a call, of the kernels (GPU) or the ops' own time (CPU)."""
    found: dict[str, float] = {}
    for event in averages:
        if device == "cuda":
            if str(getattr(event, "device_type", "")) != "DeviceType.CUDA":
                continue
            total = getattr(event, "self_device_time_total", None)
            total = getattr(event, "self_cuda_time_total", 0.0) if total is None else total
        else:
            total = event.self_cpu_time_total
        if total > 0:
            found[event.key] = total / calls
    return found


def print_configs() -> None:
    """Every live Inductor runtime autotuner (one per Triton kernel of each compiled instance, in build order): the
    kernel and the configuration it launches. Instances built from one graph hold kernels of the same names."""
    import gc
    import warnings

    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        print("configs: no Inductor runtime autotuner here")
        return
    try:
        from torch._inductor import config as inductor_config
        local = getattr(inductor_config, "autotune_local_cache", "?")
    except ImportError:
        local = "?"
    with warnings.catch_warnings():  # isinstance on every live object wakes deprecated module attributes
        warnings.simplefilter("ignore")
        tuners = [o for o in gc.get_objects() if _is_a(o, CachingAutotuner)]
    print(f"configs: {len(tuners)} runtime autotuners (autotune_local_cache={local})")
    for tuner in tuners:
        picks = [f"{launcher.config}" for launcher in getattr(tuner, "launchers", None) or []]
        name = getattr(tuner.fn, "__name__", "?")
        print(f"  {name}: {len(getattr(tuner, 'configs', None) or [])} configs left, launching {picks}", flush=True)


def _is_a(thing: object, cls: type) -> bool:
    """isinstance, false for a dead weak proxy (which raises ReferenceError when asked its class)."""
    try:
        return isinstance(thing, cls)
    except ReferenceError:
        return False


def compare_captures(manifest, case, modules: dict, example: dict, count: int, clock, flush, iterations: int) -> None:
    """Every capture of every module replayed against A's first capture, fresh values and a flush before each call."""
    from fastkernels.checks import clone
    from fastkernels.capture import capture

    static = clone(example)
    with torch.no_grad():
        captures = {f"{who}{k}": capture(module, static) for k in range(count) for who, module in modules.items()}
    failed = {name: c for name, c in captures.items() if isinstance(c, str)}
    if failed:
        print(f"graph: not capturable: {failed}")
        return

    def prepare(name: str, index: int, inputs: dict) -> None:
        refill_inputs(manifest, case, static, generator("cuda", unpredictable_seed()))
        flush()

    capture_kernels({name: c.graph for name, c in captures.items()}, 20, flush)
    for name, other in captures.items():
        if name == "A0":
            continue
        calls = {"first": lambda _: captures["A0"].graph.replay(), "second": lambda _, g=other.graph: g.replay()}
        samples = time_interleaved(calls, [None], clock, 10, iterations, f"diagnose/graph/{name}", prepare=prepare)
        low, high = speedup_ci95(samples["first"], samples["second"])
        print(f"graph A0 vs {name:4s} speedup {paired_speedup(samples['first'], samples['second']):.4f} "
              f"[{low:.4f}, {high:.4f}]  A0 {np.median(samples['first']) * 1e3:.2f} us, "
              f"{name} {np.median(samples['second']) * 1e3:.2f} us", flush=True)


def capture_kernels(graphs: dict, calls: int, flush) -> None:
    """The kernels each capture replays and their device time a replay (torch.profiler over `calls` replays, a flush
    before each): captures of one module that launch different kernels (a library picking another algorithm at
    capture time) name the cause of a capture's speed at once. The flush's own kernels are left out."""
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as flushes:
        for _ in range(calls):
            flush()
        torch.cuda.synchronize()
    flush_kernels = set(kernel_times(flushes.key_averages(), "cuda", calls))
    for name, graph in graphs.items():
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiled:
            for _ in range(calls):
                flush()
                graph.replay()
            torch.cuda.synchronize()
        kernels = {k: us for k, us in kernel_times(profiled.key_averages(), "cuda", calls).items()
                   if k not in flush_kernels}
        listed = " + ".join(f"{k[:70]} {us:.2f} us" for k, us in sorted(kernels.items(), key=lambda kv: -kv[1]))
        print(f"graph kernels {name:4s} {sum(kernels.values()):8.2f} us a replay: {listed}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

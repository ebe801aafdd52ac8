"""How long does the host take to queue one call of a task's production implementations, and how much of it is the
harness's? Tells an implementation's own host cost from what the timed path adds around it.

The worker logs' `launches X us median` (timing.pad_note) count from the start event's record to the call's return.
On the H200 (2026-12-03) a plain torch operator queued in 29-40 us there (gelu), cuBLAS linear in 84-148 us and
Liger's or Inductor's norms in 108-302 us, and every case's launch pad settled just above its slowest launches.
This script times, for each available production implementation of each TASK/CASE, over --calls calls:

  bare     the call alone, under torch.no_grad(), behind a device spin long enough that the host never waits for
           the device (CUDA), so the seconds are the host's: the implementation's own launch cost
  clock    the same call through the harness's clock (timing.CudaEventClock, its launch pad fixed at --pad-us so
           no call is timed again) with the harness's cache flush before each: what the worker logs report
  paused   `clock` with the garbage collector paused, as the harness's timed calls run (garbage_collector.py)

and prints the median and 99th percentile of each in microseconds (an implementation that waits for the device
inside its call, a host sync, shows the spin in `bare`). `clock` above `bare` by more than an event
record (a few us) is the harness's doing; `bare` near `clock` makes the launch pads the implementation's cost. On
the CPU there is no device to spin, so every condition times the call itself (the script's logic, not a launch).

Usage: python scripts/host_launch.py TASK[/CASE] ... [--calls 200] [--pad-us 5000] [--impl NAME]
(a TASK without /CASE takes its first case for this device; `source scripts/device-env.sh` first on the device)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.build import build, reference_state  # noqa: E402
from fastkernels.cache import cache_flush  # noqa: E402
from fastkernels.config import BaselineConfig  # noqa: E402
from fastkernels.garbage_collector import collector_paused  # noqa: E402
from fastkernels.inputs import generator, make_inputs, stream_seed  # noqa: E402
from fastkernels.plan import plan_task  # noqa: E402
from fastkernels.registry import Registry, UnknownTaskError  # noqa: E402
from fastkernels.timing import CudaEventClock  # noqa: E402


def bare_launches(call, calls: int, device: str, spin_cycles: int) -> list[int]:
    """Host ns each call took to return, the device kept busy ahead of it (CUDA) so no call waits for it."""
    taken = []
    for _ in range(calls):
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda._sleep(spin_cycles)
        began = time.perf_counter_ns()
        call()
        taken.append(time.perf_counter_ns() - began)
    if device == "cuda":
        torch.cuda.synchronize()
    return taken


def clock_launches(call, calls: int, device: str, pad_us: float, flush, paused: bool) -> list[int]:
    """Host ns each call took to queue through the harness's clock and flush (CUDA), as the worker logs count them;
    on the CPU the call's own ns (the host clock has no launch to count)."""
    if device != "cuda":
        return bare_launches(call, calls, device, 0)
    clock = CudaEventClock(pad_us, max_pad_us=pad_us)  # one fixed pad: no call is timed again behind a longer one
    if paused:
        with collector_paused():
            for _ in range(calls):
                clock.time_call(call, flush, "host_launch")
    else:
        for _ in range(calls):
            clock.time_call(call, flush, "host_launch")
    return clock.launch_ns["host_launch"]


def summary(name: str, taken: list[int]) -> str:
    median, tail = np.percentile(np.asarray(taken) / 1e3, [50, 99])
    return f"{name} {median:.1f} us median, {tail:.1f} us p99"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("selection", nargs="+", metavar="TASK[/CASE]")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--pad-us", type=float, default=5000.0, help="the clock's fixed launch pad")
    parser.add_argument("--impl", help="only this production implementation")
    args = parser.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    registry = Registry()
    flush, note = cache_flush(device, 60.0 if device == "cuda" else 8.0)
    print(f"host launch times on {device} ({note}), {args.calls} calls a condition", flush=True)
    for selected in args.selection:
        task, _, case_name = selected.partition("/")
        try:
            plan = plan_task(registry, task, device, BaselineConfig(name="production"), None, "independent")
        except UnknownTaskError as error:
            parser.error(str(error))
        manifest = plan.manifest
        cases = [case for case in manifest.cases if case.tier == ("gpu" if device == "cuda" else "cpu")]
        try:
            case = manifest.case(case_name) if case_name else cases[0]
        except (KeyError, IndexError):
            parser.error(f"{task} has no case {case_name or 'for ' + device!r}: {[c.name for c in manifest.cases]}")
        state = reference_state(manifest, case, plan.eager.cls, plan.eager.components, device, 0)
        inputs = make_inputs(manifest, case, device, generator(device, stream_seed(0, manifest.name, case.name,
                                                                                  "timing", 0)))
        impls = [impl for impl in plan.baselines if args.impl in (None, impl.name)]
        if not impls:
            parser.error(f"{task} has no available production implementation {args.impl!r}:"
                         f" {[impl.name for impl in plan.baselines]}")
        for impl in impls:
            module = build(impl.cls, case, impl.components, state, device, "A")
            with torch.no_grad():
                def call() -> object:
                    return module(**inputs)

                for _ in range(10):  # first calls compile and autotune: not launches
                    call()
                spin = int(args.pad_us * 2000)
                conditions = [summary("bare", bare_launches(call, args.calls, device, spin)),
                              summary("clock", clock_launches(call, args.calls, device, args.pad_us, flush, False)),
                              summary("paused", clock_launches(call, args.calls, device, args.pad_us, flush, True))]
            print(f"{manifest.name}/{case.name} {impl.name}: " + "; ".join(conditions), flush=True)
            del module
    return 0


if __name__ == "__main__":
    sys.exit(main())

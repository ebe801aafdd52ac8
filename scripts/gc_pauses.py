"""How long Python's garbage collector stalls a worker's host thread, with and without fastkernels.garbage_collector.

Each variant runs in a fresh interpreter that imports what the worker fork server imports (fastkernels.preload, which
now freezes its objects), builds some modules as a case would, then times 40000 small torch calls in a loop, with
per-call records kept alive as a timed phase keeps its samples. Prints for the loop the median, 99.9th percentile
and largest call time with the collections that ran inside it, per generation, then the tracked and frozen object
counts and a full collection's time.
Variants: `unfrozen` (the preload's imports without its freeze: the harness before this change), `frozen` (the preload's freeze),
`frozen+paused` (and the loop inside garbage_collector.collector_paused, as time_interleaved runs it).
Usage: python scripts/gc_pauses.py [--calls N]   (CPU; 2026-12-02 on the 2-core development machine: see
fastkernels/garbage_collector.py)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import ast, gc, importlib, sys, time
variant, calls = sys.argv[1], int(sys.argv[2])
if variant == "unfrozen":  # the preload's imports without its freeze: the module list read from its source
    source = open("fastkernels/preload.py").read()
    assignment = next(node for node in ast.parse(source).body if isinstance(node, ast.Assign)
                      and getattr(node.targets[0], "id", "") == "MODULES")
    for name in ast.literal_eval(assignment.value):
        try:
            importlib.import_module(name)
        except Exception:
            pass
else:
    import fastkernels.preload
import torch
from fastkernels.garbage_collector import collector_paused
collections = []
def watch(phase, info):
    if phase == "start":
        watch.started = time.perf_counter()
    else:
        collections.append((info["generation"], time.perf_counter() - watch.started))
modules = [torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(20)]) for _ in range(30)]
gc.callbacks.append(watch)
x = torch.randn(8, 64)
times, kept = [], []
def loop():
    for i in range(calls):
        t = time.perf_counter()
        y = modules[i % len(modules)](x)
        kept.append((y, [i]))
        if len(kept) > 2000:
            kept.pop(0)
        times.append(time.perf_counter() - t)
    gc.callbacks.remove(watch)  # what ran inside the loop only
if variant == "frozen+paused":
    with collector_paused():
        loop()
else:
    loop()
tracked, frozen = len(gc.get_objects()), gc.get_freeze_count()
start = time.perf_counter(); gc.collect(); full_ms = (time.perf_counter() - start) * 1e3
times.sort()
by_generation = {}
for generation, seconds in collections:
    by_generation.setdefault(generation, []).append(seconds * 1e3)
summary = ", ".join(f"gen {g}: {len(v)} (max {max(v):.2f} ms)" for g, v in sorted(by_generation.items())) or "none"
print(f"{variant:14s} tracked {tracked:7d} frozen {frozen:7d}  full collection {full_ms:7.1f} ms  |  loop of "
      f"{calls}: median {times[len(times) // 2] * 1e6:.0f} us, 99.9% {times[int(len(times) * 0.999)] * 1e6:.0f} us, "
      f"max {times[-1] * 1e3:.2f} ms; collections inside: {summary}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40000)
    args = parser.parse_args()
    for variant in ("unfrozen", "frozen", "frozen+paused"):
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), variant, str(args.calls)], cwd=ROOT,
                                capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            print(f"{variant}: failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return 1
        print(result.stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

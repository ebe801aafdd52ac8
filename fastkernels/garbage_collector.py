"""Python's cyclic garbage collector, kept out of what is timed.

A full collection walks every object the process tracks: 403k after the fork server's imports (fastkernels.preload),
and on the 2-core development machine (2026-12-02, `python scripts/gc_pauses.py`, twice) one fired on its own in a
loop of 40000 small torch calls and stalled it 151-156 ms; with those objects frozen a full collection took 13-14 ms
and none fired in the loop. One that fires inside a timed call stalls the host that long: the call is timed again
behind a longer launch pad, and the case keeps that pad for every later call (timing.CudaEventClock), so one
collection can cost a case seconds of spinning pads; a stall that outlasts the largest pad (20 ms) is in the interval
and earns the row a host-latency note. Two measures, both on the harness's side of every boundary:

- `freeze_harness_objects()`: everything the process tracks when it is called moves to the collector's permanent
  generation (`gc.freeze`, no object scanned or freed), so later collections skip it. Called by the fork server after
  its imports and by the worker just before the first candidate module is imported, never later: candidate objects
  are never frozen, so the collection at each case's start (case_caches.py) still ends candidate objects that sit in
  reference cycles before that case's baselines compile. Frozen objects drop out of `gc.get_objects()`; that hides
  nothing, since any code can unfreeze them (the exploits that search the interpreter's objects do). They are
  unfrozen at exit: objects still frozen when the interpreter shuts down are never finalised, and nanobind then
  reports Triton's IR bindings as leaked (27 lines on stderr at the end of every CPU run, 2026-12-07).
- `collector_paused()`: no automatic collection inside a timed phase, as Python's own `timeit` does; the collector is
  left as it was found (a candidate that switched it off keeps it off).
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager
from typing import Iterator


def freeze_harness_objects() -> int:
    """Move every tracked object to the permanent generation, to be unfrozen at exit; returns how many are frozen."""
    atexit.unregister(gc.unfreeze)  # registered once however often this is called
    atexit.register(gc.unfreeze)
    gc.freeze()
    return gc.get_freeze_count()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside the block; the collector is re-enabled after it only if it was enabled before.
    Garbage in reference cycles made inside waits for the next collection after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

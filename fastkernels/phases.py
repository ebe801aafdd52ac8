"""Where a worker's time goes: one line per phase, seconds since the runner launched the process, in the task's log
(`workers/<task>.log`). Read it to see whether start-up, the oracle, correctness or timing dominates a task."""

from __future__ import annotations

import os
import time

LAUNCHED_AT_ENV = "FASTKERNELS_LAUNCHED_AT"
_start = float(os.environ.get(LAUNCHED_AT_ENV) or time.time())


def restart() -> None:
    """Count from the launch time in the environment (a worker forked from a server that imported this earlier)."""
    global _start
    _start = float(os.environ.get(LAUNCHED_AT_ENV) or time.time())


def phase(what: str) -> None:
    print(f"[{time.time() - _start:8.2f} s] {what}", flush=True)

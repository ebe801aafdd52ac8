"""Where a worker's time goes: one line per phase, seconds since the runner launched the process, in the task's log
(`workers/<task>.log`). Read it to see whether start-up, the oracle, correctness or timing dominates a task."""

from __future__ import annotations

import os
import re
import time

LAUNCHED_AT_ENV = "FASTKERNELS_LAUNCHED_AT"
_start = float(os.environ.get(LAUNCHED_AT_ENV) or time.time())


def restart() -> None:
    """Count from the launch time in the environment (a worker forked from a server that imported this earlier)."""
    global _start
    _start = float(os.environ.get(LAUNCHED_AT_ENV) or time.time())


def phase(what: str) -> None:
    print(f"[{time.time() - _start:8.2f} s] {what}", flush=True)


def phase_name(text: str) -> str:
    """A line `phase` wrote (its text after the stamp) as the phase it ends, without the task/case, counts, notes
    and implementation names: what scripts/measure.py and scripts/compare_phases.py add up by."""
    # each parenthesised note (one level of nesting inside it allowed) goes, not the text between two of them
    text = re.sub(r"\s*\([^()]*(\([^()]*\)[^()]*)*\)", "", re.sub(r"^[^\s/]+/[^\s:]+: ", "", text)).split(":")[0]
    text = re.sub(r"^\d+ ", "", text)
    text = re.sub(r"^case \S+ \S+$", "case verdict", text)
    text = re.sub(r"^graph captures raised to \d+ a side$", "graph captures raised", text)
    return re.sub(r"^baseline \S+ chosen$", "baseline chosen", text)

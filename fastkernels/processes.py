"""The process table as Linux's /proc shows it: what the warden, its GPU watch and the runner read about the
processes below a worker (who is whose child, in which process group, stopped or not, started how); and `prctl`,
through which the warden and the judge set their own process attributes."""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessStat:
    state: str  # R, S, D, Z (zombie), T (stopped), t (traced), ...
    parent: int
    group: int


def process_stat(pid: int) -> ProcessStat | None:
    """`pid`'s /proc stat, or None when it is gone (or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
    except (OSError, IndexError):
        return None
    return ProcessStat(fields[0].decode(), int(fields[1]), int(fields[2]))


def live_processes() -> dict[int, ProcessStat]:
    """Every process that is not a zombie."""
    found: dict[int, ProcessStat] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = process_stat(int(entry))
            if stat is not None and stat.state != "Z":
                found[int(entry)] = stat
    return found


def children(pid: int) -> dict[int, int]:
    """The live children of `pid` and each one's process group."""
    return {child: stat.group for child, stat in live_processes().items() if stat.parent == pid}


def descendants(root: int) -> set[int]:
    """Every live process below `root`."""
    parents = {pid: stat.parent for pid, stat in live_processes().items()}
    below: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - below
        below |= frontier
    return below


def stopped(pid: int) -> bool:
    """`pid` is stopped (SIGSTOP) or held by a tracer."""
    stat = process_stat(pid)
    return stat is not None and stat.state in ("T", "t")


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()[:120]
    except OSError:
        return "?"


def prctl(option: int, value: int) -> bool:
    """Linux `prctl(option, value)` on this process; whether the kernel took it (False off Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0

"""Which processes below a worker hold a GPU context, read through NVML by the worker's warden.

A candidate can start a helper process (past the static check, inside the worker's process group) that loads the GPU
only while the baseline runs: the timed stream never sees it, and the warden ends it with the task. Besides the
worker, the only process below the warden that needs the GPU is the judge, started before any candidate code runs;
the worker names its children at that moment (`vouch_for_children`, once, through a pipe it then closes) and the
warden polls NVML's process lists for anything else below it (`GpuWatch`: every second while the worker runs, and
once as it ends, before its group is killed) and logs what it finds; the runner makes every case of the task a
REWARD_HACK. A helper that holds a context only between two polls is not seen (docs/measurement.md). No honest process does this: on the H200 (2026-11-30, 403 noop rows over all
87 tasks, Inductor's compile workers, Triton, FLA, Liger and Ray lanes included) the watch named none. NVML reports
host pids: inside a container with its own pid namespace nothing matches.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from fastkernels.clocks import nvml
from fastkernels.processes import children, command_line, descendants

_vouch_fd: int | None = None  # in the worker: its end of the pipe to the warden, until it vouches


def vouch_for_children() -> None:
    """Tell the warden which children this worker has before any candidate code runs; once (the pipe then closes,
    so later code cannot add to the list)."""
    global _vouch_fd
    if _vouch_fd is None:
        return
    pids = children(os.getpid()) if sys.platform.startswith("linux") else {}
    try:
        os.write(_vouch_fd, (" ".join(str(pid) for pid in pids) + "\n").encode())
    finally:
        os.close(_vouch_fd)
        _vouch_fd = None


def gpu_pids(lib: Any) -> set[int]:
    """Every pid NVML lists with a compute or graphics context on any GPU of this host."""
    pids: set[int] = set()
    try:
        count = lib.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001 - no readable GPU: nothing to report
        return pids
    for index in range(count):
        try:
            handle = lib.nvmlDeviceGetHandleByIndex(index)
        except Exception:  # noqa: BLE001
            continue
        for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            try:
                pids.update(int(process.pid) for process in getattr(lib, getter)(handle))
            except Exception:  # noqa: BLE001 - a driver without that query
                continue
    return pids


class GpuWatch:
    """The warden's side: reads the worker's vouched children from `vouch_fd`, then on each `poll` records every
    process below the warden, besides the worker and those children, that NVML lists on a GPU."""

    def __init__(self, warden: int, worker: int, vouch_fd: int) -> None:
        self.warden, self.worker, self.vouch_fd = warden, worker, vouch_fd
        os.set_blocking(vouch_fd, False)
        self._text = b""
        self.vouched: set[int] | None = None
        self.found: dict[int, str] = {}
        self.lib = nvml()

    @property
    def active(self) -> bool:
        return self.lib is not None and sys.platform.startswith("linux")

    def poll(self) -> None:
        if self.vouched is None:
            self._read_vouch()
            if self.vouched is None:  # no candidate code has run yet
                return
        on_gpu = gpu_pids(self.lib) - self.vouched - {self.worker, self.warden}
        for pid in on_gpu & descendants(self.warden):
            self.found.setdefault(pid, command_line(pid))

    def _read_vouch(self) -> None:
        try:
            chunk = os.read(self.vouch_fd, 4096)
        except BlockingIOError:
            return
        self._text += chunk
        if b"\n" in self._text or not chunk:  # a whole line, or the worker closed its end without one
            self.vouched = {int(word) for word in self._text.split(b"\n", 1)[0].split() if word.isdigit()}
            os.close(self.vouch_fd)

    def report(self) -> str:
        """The warden's log line, or "" when nothing else below the worker held a GPU context."""
        if not self.found:
            return ""
        return ("warden: GPU contexts below the worker besides its own and its judge's: "
                + "; ".join(f"pid {pid} ({command})" for pid, command in sorted(self.found.items())))

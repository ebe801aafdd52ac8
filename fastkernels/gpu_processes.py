"""Which processes below a worker hold a GPU context, read through NVML by the worker's warden.

A candidate can start a helper process (past the static check, inside the worker's process group) that loads the GPU
only while the baseline runs: the timed stream never sees it, and the warden ends it with the task. Besides the
worker, the only process below the warden that needs the GPU is the judge, started before any candidate code runs;
the worker names its children at that moment (`vouch_for_children`, once, through a pipe it then closes) and the
warden polls NVML's process lists for anything else below it (`GpuWatch`: every second while the worker runs, and
once as it ends, before its group is killed) and logs what it finds; the runner makes every case of the task a
REWARD_HACK. A helper that holds a context only between two polls is not seen (docs/measurement.md). No honest
process does this: on the H200 (2026-11-30, 403 noop rows over all 87 tasks, Inductor's compile workers, Triton,
FLA, Liger and Ray lanes included) the watch named none.
NVML reports host pids, so inside a container with its own pid namespace (Docker's default) no pid it lists is one
of ours. The watch notices: the worker holds a context (its /proc maps map /dev/nvidia-uvm, as every process with a
CUDA context does and no NVML-only process, Triton driver query or Inductor compile worker does:
scripts/gpu_context_probe.py, H200, 2026-12-04) yet NVML does not list it, on two polls in a row. From then on it
reads the suspects' maps instead, and says so in the warden's log.
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


UVM_DEVICE = "/dev/nvidia-uvm"  # mapped by a process once it holds a CUDA context (module docstring)
BLIND_AFTER = 2  # polls in a row on which NVML leaves out the worker's context before the watch reads maps instead


def maps_file(pid: int, path: str) -> bool:
    """Whether `pid` maps `path` (its /proc maps); False when it is gone or its maps cannot be read."""
    needle = path.encode()
    try:
        with open(f"/proc/{pid}/maps", "rb") as maps:
            return any(line.rstrip(b"\n").endswith(needle) for line in maps)
    except OSError:
        return False


class GpuWatch:
    """The warden's side: reads the worker's vouched children from `vouch_fd`, then on each `poll` records every
    process below the warden, besides the worker and those children, that NVML lists on a GPU (or, where NVML
    cannot see this pid namespace, that maps `device_file`)."""

    def __init__(self, warden: int, worker: int, vouch_fd: int, lib: Any = None,
                 device_file: str = UVM_DEVICE) -> None:
        self.warden, self.worker, self.vouch_fd, self.device_file = warden, worker, vouch_fd, device_file
        os.set_blocking(vouch_fd, False)
        self._text = b""
        self.vouched: set[int] | None = None
        self.found: dict[int, str] = {}
        self.lib = lib if lib is not None else nvml()
        self.sees_namespace: bool | None = None  # None until NVML lists the worker (True) or is found blind (False)
        self._unlisted = 0  # polls in a row on which the worker held a context that NVML did not list

    @property
    def active(self) -> bool:
        return self.lib is not None and sys.platform.startswith("linux")

    def poll(self) -> None:
        if self.vouched is None:
            self._read_vouch()
            if self.vouched is None:  # no candidate code has run yet
                return
        holds_context = self.sees_namespace is None and maps_file(self.worker, self.device_file)  # before NVML
        listed = gpu_pids(self.lib)
        if self.sees_namespace is None:
            if self.worker in listed:
                self.sees_namespace = True
            else:
                self._unlisted = self._unlisted + 1 if holds_context else 0
                if self._unlisted >= BLIND_AFTER:
                    self.sees_namespace = False
        suspects = descendants(self.warden) - self.vouched - {self.worker, self.warden}
        on_gpu = suspects & listed
        if self.sees_namespace is False:
            on_gpu |= {pid for pid in suspects if maps_file(pid, self.device_file)}
        for pid in on_gpu:
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
        """The warden's log lines, or "": what else below the worker held a GPU context, and whether the watch had
        to read maps because NVML could not see this pid namespace."""
        lines = []
        if self.sees_namespace is False:
            lines.append(f"warden: NVML lists no process of this pid namespace (the worker's CUDA context is not "
                         f"among its processes), so the GPU-context watch read {self.device_file} in /proc maps")
        if self.found:
            lines.append("warden: GPU contexts below the worker besides its own and its judge's: "
                         + "; ".join(f"pid {pid} ({command})" for pid, command in sorted(self.found.items())))
        return "\n".join(lines)

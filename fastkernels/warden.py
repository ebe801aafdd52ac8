"""The warden: the process a worker runs under, so that nothing a candidate starts outlives its task unseen.

The runner ends a task by killing the worker's process group: its judge, Inductor's compile pool, a candidate's
subprocesses. A child that calls setsid, or a double-forked daemon, leaves that group: it would outlive the task,
free to load the GPU while later tasks are timed or to rewrite the run directory afterwards. So the process the
runner starts is a warden: it marks itself a child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`), which makes
every process orphaned below it its child instead of init's, and forks the worker into a process group of its own.
When the worker exits, or the runner asks to end the task (SIGTERM), the warden kills the worker's group, then every
process still below it (strays: they had left the group), and exits with STRAYS_EXIT if there were any, otherwise
with the worker's status (128 + N for a worker killed by signal N). A warden that dies of a signal the runner did
not send was killed from below: the runner treats that as a hack too (runner.py), and the kernel kills the worker
with it (PR_SET_PDEATHSIG). Where NVML reads a GPU, the warden also notes processes below it that hold a GPU
context besides the worker and its judge (gpu_processes.py). The warden runs no candidate code.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Callable, NoReturn

from fastkernels import gpu_processes
from fastkernels.gpu_processes import GpuWatch
from fastkernels.processes import children, command_line, prctl

STRAYS_EXIT = 86  # the warden killed processes that had left the worker's process group
SIGNAL_EXIT_BASE = 128  # the warden exits 128 + N when its worker was killed by signal N (as shells report it)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STRAY_WAIT_S = 5.0
GPU_POLL_S = 1.0  # NVML process lists, read this often while the worker runs (gpu_processes.py)


def become_subreaper() -> bool:
    """Mark this process a child subreaper; False where the kernel has no such thing (not Linux)."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def run_warded(work: Callable[[], int]) -> NoReturn:
    """Run `work` in a worker process forked below this one and ward it (see the module docstring); never returns."""
    subreaper = become_subreaper()
    if not subreaper:
        print("warden: this kernel makes no child subreaper (not Linux, or prctl refused): processes that leave the "
              "worker's process group are not caught", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    warden = os.getpid()
    asked: list[bool] = []
    workers: list[int] = []

    def end_task(signum: int, frame: object) -> None:  # the runner's request (or a worker's SIGTERM: the same)
        asked.append(True)
        for group in workers:
            _kill_group(group)

    signal.signal(signal.SIGTERM, end_task)  # before the fork: a request at any moment is answered
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the runner, which asks through SIGTERM
    vouch_read, vouch_write = os.pipe()  # the worker names its children through it once, before candidate code
    worker = os.fork()
    if worker == 0:
        os.close(vouch_read)
        gpu_processes._vouch_fd = vouch_write
        os._exit(_work(work, warden))
    os.close(vouch_write)
    try:
        os.setpgid(worker, worker)  # also done by the worker: whichever runs first, SIGTERM finds the group
    except OSError:
        pass
    workers.append(worker)
    if asked:  # asked between the fork and the line above
        _kill_group(worker)
    watch = GpuWatch(warden, worker, vouch_read)
    status = _wait(worker, watch)
    if watch.active:  # once more as the worker ends, before its group is killed: a helper of its last second
        watch.poll()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_group(worker)  # what the worker left in its group: its judge, a compile pool, plain subprocesses
    strays = _kill_strays(worker) if subreaper else []
    if watch.report():
        print(watch.report(), file=sys.stderr, flush=True)
    if strays:
        print(f"warden: killed {len(strays)} stray process(es): "
              + "; ".join(strays), file=sys.stderr, flush=True)
        os._exit(STRAYS_EXIT)
    if os.WIFSIGNALED(status):
        os._exit(SIGNAL_EXIT_BASE + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _wait(worker: int, watch: GpuWatch) -> int:
    """The worker's wait status; where NVML reads a GPU, polling it every GPU_POLL_S meanwhile."""
    if not watch.active:
        return os.waitpid(worker, 0)[1]
    polled = 0.0
    while True:
        pid, status = os.waitpid(worker, os.WNOHANG)
        if pid:
            return status
        if time.monotonic() - polled >= GPU_POLL_S:
            polled = time.monotonic()
            watch.poll()
        time.sleep(0.02)


def _work(work: Callable[[], int], warden: int) -> int:
    """The worker side of the fork: its own process group, killed by the kernel if its warden dies (a worker that
    kills its warden does not go on unwatched), the runner's signals back to their defaults."""
    os.setpgid(0, 0)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != warden:  # the warden died before the line above
        return SIGNAL_EXIT_BASE + signal.SIGKILL
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code: int = 1
    try:
        code = work()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if done.code is not None and not isinstance(done.code, int):
            print(done.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported in the log like an uncaught exception, then exit 1
        import traceback

        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream: nothing left to say
            pass
    return code


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_strays(worker: int) -> list[str]:
    """Kill every process still below this one outside the worker's group (killed members of the group that were
    orphaned here are not strays), and the processes their deaths orphan in turn; describe the strays."""
    strays: list[str] = []
    seen: set[int] = set()
    deadline = time.monotonic() + STRAY_WAIT_S
    while time.monotonic() < deadline:
        below = children(os.getpid())
        for pid, group in below.items():
            if group != worker and pid not in seen:
                seen.add(pid)
                strays.append(f"pid {pid} ({command_line(pid)})")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()
        if not below:
            break
        time.sleep(0.01)
    return strays


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return

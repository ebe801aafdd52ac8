"""Starting a worker process: forked from a server that has already imported torch, or executed fresh.

A fresh `python -m fastkernels.worker` spends seconds importing torch, Inductor and kernel libraries before it scores
anything (4-15 s of each task on the H200: worker logs of 2026-11-30). With `harness.worker_start=forkserver` (the
default) each worker is forked from multiprocessing's fork server, which imported those once (preload.py) and never
touches the GPU. A worker is still a process of its own: its own session (the runner kills its whole group), its own
log, its exit status or signal; nothing it does reaches the server or the next worker. `exec` runs the plain
subprocess. A forked worker that finds CUDA already initialised (a preloaded library touched the GPU) replaces
itself with a fresh interpreter, so a bad fork costs time, never a result.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import types
from multiprocessing import forkserver
from typing import Iterator, Literal, Mapping, Protocol

from fastkernels.environ import set_environment

WorkerStart = Literal["forkserver", "exec"]
WORKER_COMMAND = [sys.executable, "-m", "fastkernels.worker"]


class WorkerProcess(Protocol):
    pid: int

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


# Read while modules are imported, so the fork server's value must be the worker's: Triton decorates its own standard
# library as interpreted or compiled, and each `triton.autotune` kernel decides when its module is imported whether
# to cache its picks on disk (Liger's fused MoE, preloaded: without this its picks were never written or restored,
# and it autotuned afresh, ~100 s a shape, in every worker on the H200 through 2026-12-02). A worker that needs
# other values than the server started with is executed fresh instead.
IMPORT_TIME_ENV = ("TRITON_INTERPRET", "TRITON_CACHE_AUTOTUNING")
_server_env: dict[str, str | None] | None = None
_server_lock = threading.Lock()  # scale=threads lanes start workers concurrently
_main_lock = threading.Lock()


def start_worker(
    job_path: str, log_path: str, environment: dict[str, str], how: WorkerStart, row_key: bytes
) -> WorkerProcess:
    """Start the worker for `job_path` with `environment`, its stdout and stderr in `log_path`. `row_key` signs its
    rows (fastkernels.row_signing); it crosses on stdin or in the forked process's arguments, never in the
    environment, the command line or a file."""
    if how == "forkserver" and not _fork_server_matches(environment):
        how = "exec"
    if how == "exec":
        with open(log_path, "w") as log:
            process = subprocess.Popen([*WORKER_COMMAND, job_path], stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.PIPE, env=environment, start_new_session=True)
        assert process.stdin is not None
        process.stdin.write(row_key.hex().encode() + b"\n")
        process.stdin.close()
        return process
    return _Forked(job_path, log_path, environment, row_key)


def import_time_environment(environment: Mapping[str, str]) -> dict[str, str | None]:
    """The part of `environment` that modules read as they are imported (IMPORT_TIME_ENV)."""
    return {key: environment.get(key) for key in IMPORT_TIME_ENV}


def _fork_server_matches(environment: dict[str, str]) -> bool:
    """Start the fork server on first use with the worker's import-time environment; later, whether it matches
    (and, if the server has died since, start it again with the environment it had)."""
    global _server_env
    wanted = import_time_environment(environment)
    with _server_lock:
        if _server_env is None:
            _server_env = wanted
        if _server_env != wanted:
            return False
        _start_fork_server(wanted)  # a no-op while the server runs
    return True


def _start_fork_server(wanted: dict[str, str | None]) -> None:
    """Start the server with `wanted` in its environment (it inherits this process's), then restore ours."""
    saved = {key: os.environ.get(key) for key in IMPORT_TIME_ENV}
    set_environment(wanted)
    # torch.cuda.is_available() through NVML, so preloaded code that asks whether a GPU exists does not initialise
    # the CUDA driver in the server (a CUDA context does not survive fork)
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        _fork_server()
        with _main_hidden():  # the server would import a main script too (once)
            forkserver.ensure_running()
    finally:
        set_environment(saved)


def stop_fork_server(wait_s: float = 5.0) -> None:
    """End the worker fork server and multiprocessing's resource tracker, if this process started them, and wait
    for them: left to notice their parent's exit on their own, they outlive a run by up to a second under load,
    holding its output open. The tracker also serves every process forked from the server, so it exits only once
    they all have: its wait is bounded by `wait_s`. A later run in this process starts a fresh server."""
    from multiprocessing import resource_tracker

    global _server_env
    with _server_lock:
        with contextlib.suppress(OSError):
            forkserver._forkserver._stop()  # CPython's own (3.8 on, used by its tests): the server exits at once
        _server_env = None
    tracker = resource_tracker._resource_tracker
    with tracker._lock:
        if tracker._fd is None:
            return
        os.close(tracker._fd)  # its "alive" end: the tracker exits when every holder has closed it
        pid, tracker._fd, tracker._pid = tracker._pid, None, None
    deadline = time.monotonic() + wait_s
    with contextlib.suppress(ChildProcessError):
        while not os.waitpid(pid, os.WNOHANG)[0] and time.monotonic() < deadline:
            time.sleep(0.01)


def _fork_server() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fastkernels.preload"])
    return context


class _Forked:
    """A worker forked from the fork server, with Popen's poll/wait/pid."""

    def __init__(self, job_path: str, log_path: str, environment: dict[str, str], row_key: bytes) -> None:
        self._process = _fork_server().Process(target=_run_forked, args=(job_path, log_path, environment, row_key),
                                               name=f"worker {os.path.basename(job_path)}")
        try:
            with _main_hidden():
                self._process.start()
        except BaseException:  # Ctrl-C or a signal mid-start: no caller will end this worker, and multiprocessing
            self._end_started()  # joins every live child at interpreter exit, so the run could never exit
            raise
        self.pid = self._process.pid

    def _end_started(self) -> None:
        """Kill the worker if it was started (its session, or the process itself before it made one) and reap it."""
        pid = self._process.pid
        if pid is None:
            return
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
        self._process.join(timeout=30)

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self) -> int:
        self._process.join()
        return self._process.exitcode  # type: ignore[return-value]


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Start a child without the parent's `__main__`: multiprocessing re-runs the parent's main script in every child
    (as `__mp_main__`), and under Ray that is Ray's worker script, which imports Ray (the likely cause of Ray tasks'
    workers logging their first line 0.5-0.9 s late on the H200, 2026-11-30). The worker needs only
    fastkernels.launch, which the server has preloaded."""
    with _main_lock:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to re-run
        try:
            yield
        finally:
            sys.modules["__main__"] = main


def _run_forked(job_path: str, log_path: str, environment: dict[str, str], row_key: bytes) -> None:
    """The worker's first moments in the forked child: own session, own log, the task's environment."""
    os.setsid()
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    os.environ.clear()
    os.environ.update(environment)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import torch

    from fastkernels import preload

    # the fork server's state touched the GPU, or its modules were imported under another import-time environment
    # than this worker's (_fork_server_matches should have prevented that): start clean instead
    if torch.cuda.is_initialized() or preload.IMPORTED_UNDER != import_time_environment(environment):
        read, write = os.pipe()
        os.write(write, row_key.hex().encode() + b"\n")  # 65 bytes: fits the pipe, read by the new image's main
        os.close(write)
        os.dup2(read, 0)
        os.close(read)
        os.execve(sys.executable, [*WORKER_COMMAND, job_path], environment)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]
    from fastkernels import phases, worker

    phases.restart()
    worker.main([job_path], row_key)  # never returns: the warden exits with the worker's status

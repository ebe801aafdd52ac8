"""Sharding a run's tasks over several devices: one task per worker process, as on one device, but several at once.

`scale.backend`:
- `serial` (default): one task after another on device 0, in this process's order, each worker pinned to that GPU
  (`CUDA_VISIBLE_DEVICES`) so a candidate cannot put work on the host's other GPUs, where the timed device's sync
  would not see it;
- `threads`: one lane per device on this host; a lane takes the next task, runs its worker process pinned to the
  lane's GPU (`CUDA_VISIBLE_DEVICES`), then takes the next;
- `ray`: every task is a Ray task asking for one GPU and its share of CPU cores (`scale.cpus_per_task`), so Ray places
  it on a free GPU of a local cluster (started here) or of the cluster at `scale.ray_address`. The Ray task starts
  the same worker process; Ray has already narrowed `CUDA_VISIBLE_DEVICES` to its GPU. Before scoring, it checks
  that its GPU matches the run's hardware profile and refuses otherwise, so a job never lands on the wrong hardware.

Tasks are handed out longest first (most cases, highest level), so the lanes finish together. A task's rows are
identical whichever lane runs it: the worker, the seeds and the checks do not depend on the lane. The run directory
must be on a filesystem every node sees (it is, on one host).
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from fastkernels.config import ConfigError, HardwareProfile, ScaleConfig
from fastkernels.manifest import Manifest
from fastkernels.records import ResultRow
from fastkernels.worker import WorkerJob

log = logging.getLogger("fastkernels")

OnRow = Callable[[ResultRow], None]
# How long an interrupted Ray run waits for its cancelled tasks to end their workers (runner._end_task gives a warden
# WARDEN_WAIT_S, 15 s, to answer SIGTERM before it kills the worker's group).
CANCEL_WAIT_S = 20.0
RunTask = Callable[..., list[ResultRow]]


def lane_count(scale: ScaleConfig, device_kind: str, visible_gpus: int) -> int:
    """Number of tasks that run at once. Asking for more GPUs than are visible is a one-line error."""
    if scale.backend == "serial":
        return 1
    if device_kind == "cpu":
        return 1 if scale.devices == "all" else max(1, scale.devices)
    if scale.devices == "all":
        return max(1, visible_gpus)
    if scale.devices > visible_gpus and scale.backend == "threads":
        raise ConfigError(f"scale.devices={scale.devices} but only {visible_gpus} GPUs are visible on this host")
    return max(1, scale.devices)


def longest_first(work: list[tuple[WorkerJob, Manifest]]) -> list[tuple[WorkerJob, Manifest]]:
    return sorted(work, key=lambda item: (-len(item[0].cases), -item[1].level, item[0].task))


def physical_gpus(count: int) -> list[str]:
    """The GPU ids to pin lanes to, honouring a CUDA_VISIBLE_DEVICES the run itself was started with."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [part.strip() for part in visible.split(",") if part.strip()] if visible else [str(i) for i in range(count)]
    return ids[:count]


def serial_pin(device_kind: str) -> dict[str, str]:
    """The environment that pins a serial run's workers to its one GPU (device 0 as the run sees it)."""
    return {"CUDA_VISIBLE_DEVICES": physical_gpus(1)[0]} if device_kind == "cuda" else {}


def run_threads(
    work: list[tuple[WorkerJob, Manifest]], work_dir: Path, lanes: int, device_kind: str, on_row: OnRow,
    run_task: RunTask, check_gpu: Callable[[int], None],
) -> list[ResultRow]:
    """One lane per GPU on this host; each lane runs its tasks' workers pinned to its GPU."""
    gpus: queue.Queue[tuple[int, str | None]] = queue.Queue()
    if device_kind == "cuda":
        for index, gpu in enumerate(physical_gpus(lanes)):
            check_gpu(index)
            gpus.put((index, gpu))
    else:
        for index in range(lanes):
            gpus.put((index, None))

    stop = threading.Event()

    def score(item: tuple[WorkerJob, Manifest]) -> list[ResultRow]:
        job, manifest = item
        lane, gpu = gpus.get()
        try:
            env = {"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {}
            log.info("lane %d%s: %s", lane, f" (GPU {gpu})" if gpu is not None else "", job.task)
            return run_task(job, manifest, work_dir, on_row, env=env, stop=stop)
        finally:
            gpus.put((lane, gpu))

    ordered = longest_first(work)
    pool = ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="lane")
    try:
        results = dict(zip((job.task for job, _ in ordered), pool.map(score, ordered)))
    except BaseException:  # interrupted (or a lane failed): no task starts any more, running ones end their workers
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return [row for job, _ in work for row in results[job.task]]


def run_ray(
    work: list[tuple[WorkerJob, Manifest]], work_dir: Path, lanes: int, device_kind: str, profile: HardwareProfile,
    scale: ScaleConfig, on_row: OnRow,
) -> list[ResultRow]:
    """Every task a Ray task holding one GPU (or one CPU); rows are reported as each task finishes."""
    try:
        import ray
    except ImportError:
        raise ConfigError("scale.backend=ray needs Ray: pip install 'fastkernels[scale]'") from None
    # Ray sets a task's OMP_NUM_THREADS to the CPUs it reserved: at one CPU every lane's worker ran torch
    # single-threaded (Ray tasks were 12% slower than serial ones on the H200 x2, 2026-11-30; docs/scaling.md).
    cpus = scale.cpus_per_task or max(1, available_cpus() // max(lanes, 1))
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
        if scale.ray_address is None:  # a local cluster sized to the lanes asked for
            options.update(num_gpus=lanes if device_kind == "cuda" else 0, num_cpus=cpus * max(lanes, 1) + 1)
        handlers = _signal_handlers()
        ray.init(address=scale.ray_address, **options)
        _restore(handlers)  # ray.init installs its own SIGTERM handler; the run's records which signal ended it
    pending: dict[Any, WorkerJob] = {}  # bound before anything can fail, so the cancel below never hides the error
    try:
        resources = {"num_gpus": 1, "num_cpus": cpus} if device_kind == "cuda" else {"num_cpus": cpus}
        # max_calls=0: Ray would start a fresh process for every GPU task (its default for GPU tasks, to free GPU
        # memory), and with it a fresh worker fork server (launch.py): seconds a task. These Ray processes never
        # touch the GPU themselves; each task's worker process does, and exits.
        remote = ray.remote(max_retries=0, max_calls=0, **resources)(_score_remotely)
        pending = {
            remote.remote(job.model_dump_json(), str(work_dir), profile.model_dump_json(), device_kind): job
            for job, _ in longest_first(work)
        }
        results: dict[str, list[ResultRow]] = {}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(done[0])
            try:
                lines = ray.get(done[0])
            except ray.exceptions.RayTaskError as error:
                cause = error.cause if isinstance(getattr(error, "cause", None), Exception) else error
                raise ConfigError(f"task {job.task}: {str(cause).splitlines()[0]}") from None
            results[job.task] = [ResultRow.model_validate_json(line) for line in lines]
            for row in results[job.task]:
                on_row(row)
    except BaseException:  # interrupted (or a task failed): a cancelled Ray task gets KeyboardInterrupt, on which
        # run_task ends its worker
        for ref in pending:
            ray.cancel(ref)
        ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_WAIT_S)
        raise
    finally:
        if started_here:
            ray.shutdown()
    return [row for job, _ in work for row in results[job.task]]


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}


def _restore(handlers: dict[int, Any]) -> None:
    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)


def available_cpus() -> int:
    """Cores this process may run on (its affinity mask, which a Slurm or container limit narrows)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _score_remotely(job_json: str, work_dir: str, profile_json: str, device_kind: str) -> list[str]:
    """Runs on a Ray worker: refuse hardware that does not match the profile, then score the task as usual."""
    from fastkernels.hardware import detect_device, resolve_profile
    from fastkernels.registry import Registry
    from fastkernels.runner import run_task

    job = WorkerJob.model_validate_json(job_json)
    profile = HardwareProfile.model_validate_json(profile_json)
    if device_kind == "cuda":
        resolve_profile(profile, detect_device(0), {profile.name: profile})  # raises HardwareMismatch
    manifest = Registry(Path(job.tasks_root)).get(job.task)
    rows = run_task(job, manifest, Path(work_dir), lambda row: None)
    return [row.model_dump_json() for row in rows]

"""Runs one worker process per task, with a timeout, and turns every way a worker can die into result rows.

Cases a worker did not report get TIMEOUT (killed at the deadline) or RUNTIME_ERROR naming the exit code or
signal and the last line of the worker's log, so the run always has one row per selected (task, case). The process
started is the worker's warden (warden.py): when it killed processes that had left the worker's process group, was
itself killed or stopped from below, or saw a process below the worker other than it and its judge hold a GPU
context (gpu_processes.py), every case of the task is a REWARD_HACK.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Callable

from pydantic import ValidationError

from fastkernels.launch import WorkerProcess, start_worker
from fastkernels.manifest import Manifest
from fastkernels.phases import LAUNCHED_AT_ENV
from fastkernels.records import ResultRow, Status
from fastkernels.row_signing import mac_path, new_key, signed_lines
from fastkernels.processes import stopped
from fastkernels.warden import SIGNAL_EXIT_BASE, STRAYS_EXIT
from fastkernels.worker import WorkerJob, row_base

log = logging.getLogger(__name__)
POLL_S = 0.2
WARDEN_WAIT_S = 15.0


class RunStopped(Exception):
    """Raised in a lane thread whose run was interrupted (`stop` set), so that run_task ends the lane's worker."""


def run_task(
    job: WorkerJob, manifest: Manifest, work_dir: Path, on_row: Callable[[ResultRow], None],
    env: dict[str, str] | None = None, stop: threading.Event | None = None,
) -> list[ResultRow]:
    """Score one task in its own process; return exactly one row per case in `job.cases`.

    `env` is added to the worker's environment (a lane pins its GPU with CUDA_VISIBLE_DEVICES). `stop`, once set,
    ends the worker and raises RunStopped: a lane thread cannot receive the signal that interrupted the run."""
    job_path = work_dir / f"{job.task}.job.json"
    job_path.write_text(job.model_dump_json(indent=1))
    rows_path = Path(job.rows_path)
    rows_path.unlink(missing_ok=True)
    mac_path(rows_path).unlink(missing_ok=True)
    row_key = new_key()
    environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", LAUNCHED_AT_ENV: repr(time.time())}
    if job.harness.cache_autotuning:
        environment["TRITON_CACHE_AUTOTUNING"] = "1"
    if job.device == "cpu":
        environment["TRITON_INTERPRET"] = "1"
    else:
        environment.pop("TRITON_INTERPRET", None)  # a GPU run times compiled kernels, never the interpreter
    log_path = work_dir / f"{job.task}.log"
    reported: set[str] = set()
    ending: set[str] = set()  # what _end_task had to do: "asked" (SIGTERM sent), "killed" (no answer in time)
    process = start_worker(str(job_path), str(log_path), environment, job.harness.worker_start, row_key)
    try:
        timed_out = _wait(process, job.harness.timeout_s, rows_path, row_key, reported, on_row, ending, stop)
    except BaseException:  # Ctrl-C or a signal: the worker (its own session) must not outlive the run
        _end_task(process, ending)
        raise
    _end_task(process, ending)  # whatever the worker left (its judge, a candidate's processes) ends now
    rows, forged = _read_rows(rows_path, row_key, job.cases)
    if forged:  # ignored, so they earn nothing; not failed, so a stranger writing here cannot sink an honest task
        note = f"the worker's rows file held {forged} line(s) the harness did not write (ignored)"
        rows = {case: row.model_copy(update={"review": "; ".join(filter(None, (row.review, note)))})
                for case, row in rows.items()}
    missing = [case for case in job.cases if case not in rows]
    if missing:
        if timed_out:
            status, reason = Status.TIMEOUT, f"worker killed after the {job.harness.timeout_s:g} s task timeout"
        else:
            status, reason = Status.RUNTIME_ERROR, f"worker {_describe_exit(process.poll())}; {_last_line(log_path)}"
        for case in missing:
            rows[case] = ResultRow(**row_base(job, manifest.level, manifest.categories, case, ""), status=status,
                                   reason=reason)
    escape = _warden_verdict(process.poll(), ending, log_path) or _gpu_verdict(log_path)
    if escape:  # every case: the escaped processes ran beside all of them
        log.warning("%s: every case REWARD_HACK: %s", job.task, escape)
        rows = {case: row.failed(Status.REWARD_HACK, escape) for case, row in rows.items()}
    for case in job.cases:
        if case not in reported:
            on_row(rows[case])
    return [rows[case] for case in job.cases]


def _wait(
    process: WorkerProcess, timeout_s: float, rows_path: Path, row_key: bytes, reported: set[str],
    on_row: Callable[[ResultRow], None], ending: set[str], stop: threading.Event | None = None,
) -> bool:
    """Wait for the worker, reporting its rows as cases finish; True when it was killed at the deadline."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None:
        if stop is not None and stop.is_set():
            raise RunStopped(f"the run was interrupted while {rows_path.name} was being scored")
        if time.monotonic() > deadline:
            _end_task(process, ending)
            _report_new(rows_path, row_key, reported, on_row)
            return True
        if stopped(process.pid):  # a stopped warden wards nothing: end the task now, not at the deadline
            _end_task(process, ending)
            break
        time.sleep(POLL_S)
        _report_new(rows_path, row_key, reported, on_row)
    _report_new(rows_path, row_key, reported, on_row)
    return False


def _report_new(rows_path: Path, row_key: bytes, reported: set[str], on_row: Callable[[ResultRow], None]) -> None:
    """Report the signed rows of cases not reported yet (progress as cases finish); run_task reports the rest."""
    lines, _ = signed_lines(rows_path, row_key)
    for line in lines:
        try:
            row = ResultRow.model_validate_json(line)
        except ValidationError:
            break
        if row.case not in reported:
            reported.add(row.case)
            on_row(row)


def _end_task(process: WorkerProcess, ending: set[str]) -> None:
    """Ask the worker's warden to end the task (SIGTERM: it kills the worker's group and every process that left it,
    then exits: warden.py) and note "asked" in `ending`; kill the warden's group outright if it has not exited
    within WARDEN_WAIT_S and note "killed": a warden does not ignore SIGTERM unless something below it stopped it."""
    if process.poll() is None:  # never signal a pid already reaped: it may belong to another process by now
        ending.add("asked")
        try:
            if stopped(process.pid):  # stopped (SIGSTOP) or held by a tracer from below: resume it to end the task
                ending.add("stopped")
                os.kill(process.pid, signal.SIGCONT)
            os.kill(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + WARDEN_WAIT_S
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if process.poll() is not None:
        return
    ending.add("killed")
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _gpu_verdict(log_path: Path) -> str:
    """Why the task's rows are a REWARD_HACK by the warden's GPU watch (gpu_processes.py), or "": a helper process
    with its own GPU context can load the GPU while the baseline runs, or do the candidate's work where the timed
    stream does not see it."""
    note = next((line.removeprefix("warden: ") for line in reversed(_log_lines(log_path))
                 if line.startswith("warden: GPU contexts below the worker")), "")
    return (f"{note} (a helper process on the GPU: its work is outside the timed stream and it can load the GPU "
            "while the baseline runs)" if note else "")


def _warden_verdict(code: int | None, ending: set[str], log_path: Path) -> str:
    """Why the task's rows are a REWARD_HACK by what its warden saw, or "" (warden.py)."""
    if code == STRAYS_EXIT:
        said = [line for line in _log_lines(log_path) if line.startswith("warden:")]
        return ("the candidate left processes running outside its worker's process group (setsid or a daemon), "
                "where they would outlive the task; the warden " + (said[-1].removeprefix("warden: ") if said
                                                                     else "killed them (see the log)"))
    if "stopped" in ending:
        return ("the worker's warden was stopped (SIGSTOP or a tracer) from below, which would let processes the "
                "candidate started outlive the task")
    if "killed" in ending:
        return (f"the worker's warden did not end the task within {WARDEN_WAIT_S:g} s of being asked (stopped from "
                "below?): processes the candidate started may have escaped")
    if code == -signal.SIGTERM and "asked" in ending:  # asked before it was warding (still starting): no hack
        return ""
    if code is not None and code < 0:
        return (f"the worker's warden {_describe_exit(code)}, a signal the runner did not send: processes the "
                "candidate started may have escaped")
    return ""


def _read_rows(rows_path: Path, row_key: bytes, cases: list[str]) -> tuple[dict[str, ResultRow], int]:
    """Rows the harness in the worker wrote (signed), keyed by case, and how many lines in the file it did not write.
    A torn last line (a crash mid-write) is neither."""
    rows: dict[str, ResultRow] = {}
    lines, forged = signed_lines(rows_path, row_key)
    for line in lines:
        try:
            row = ResultRow.model_validate_json(line)
        except ValidationError:
            continue
        if row.case in cases and row.case not in rows:
            rows[row.case] = row
    return rows, forged


def _describe_exit(code: int | None) -> str:
    """A warden reports its worker's death by signal N as exit 128 + N; its own death by a signal reads negative."""
    signum = -code if code is not None and code < 0 else (code - SIGNAL_EXIT_BASE if code and code > SIGNAL_EXIT_BASE
                                                          else None)
    if signum is not None:
        try:
            return f"died of {signal.Signals(signum).name}"
        except ValueError:
            return f"died of signal {signum}"
    return f"exited with code {code}"


def _log_lines(log_path: Path) -> list[str]:
    try:
        return [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return []


def _last_line(log_path: Path) -> str:
    lines = _log_lines(log_path)
    return lines[-1][:300] if lines else "no output"

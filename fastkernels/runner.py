"""Runs one worker process per task, with a timeout, and turns every way a worker can die into result rows.

Cases a worker did not report get TIMEOUT (killed at the deadline) or RUNTIME_ERROR naming the exit code or
signal and the last line of the worker's log, so the run always has one row per selected (task, case).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Callable

from pydantic import ValidationError

from fastkernels.launch import WorkerProcess, start_worker
from fastkernels.manifest import Manifest
from fastkernels.phases import LAUNCHED_AT_ENV
from fastkernels.records import ResultRow, Status
from fastkernels.worker import WorkerJob, row_base

log = logging.getLogger(__name__)
POLL_S = 0.2


def run_task(
    job: WorkerJob, manifest: Manifest, work_dir: Path, on_row: Callable[[ResultRow], None],
    env: dict[str, str] | None = None,
) -> list[ResultRow]:
    """Score one task in its own process; return exactly one row per case in `job.cases`.

    `env` is added to the worker's environment (a lane pins its GPU with CUDA_VISIBLE_DEVICES)."""
    job_path = work_dir / f"{job.task}.job.json"
    job_path.write_text(job.model_dump_json(indent=1))
    rows_path = Path(job.rows_path)
    rows_path.unlink(missing_ok=True)
    environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", LAUNCHED_AT_ENV: repr(time.time())}
    if job.harness.cache_autotuning:
        environment["TRITON_CACHE_AUTOTUNING"] = "1"
    if job.device == "cpu":
        environment["TRITON_INTERPRET"] = "1"
    else:
        environment.pop("TRITON_INTERPRET", None)  # a GPU run times compiled kernels, never the interpreter
    log_path = work_dir / f"{job.task}.log"
    process = start_worker(str(job_path), str(log_path), environment, job.harness.worker_start)
    try:
        timed_out = _wait(process, job.harness.timeout_s, rows_path, on_row)
    except BaseException:  # Ctrl-C or a signal: the worker (its own session) must not outlive the run
        _kill_group(process)
        raise
    _kill_group(process)  # whatever the worker left in its group (its judge, a candidate's stray processes) ends now
    rows = _read_rows(rows_path, job.cases)
    missing = [case for case in job.cases if case not in rows]
    if missing:
        if timed_out:
            status, reason = Status.TIMEOUT, f"worker killed after the {job.harness.timeout_s:g} s task timeout"
        else:
            status, reason = Status.RUNTIME_ERROR, f"worker {_describe_exit(process.poll())}; {_last_line(log_path)}"
        for case in missing:
            row = ResultRow(**row_base(job, manifest.level, manifest.categories, case, ""), status=status, reason=reason)
            rows[case] = row
            on_row(row)
    return [rows[case] for case in job.cases]


def _wait(process: WorkerProcess, timeout_s: float, rows_path: Path, on_row: Callable[[ResultRow], None]) -> bool:
    deadline = time.monotonic() + timeout_s
    reported = 0
    while process.poll() is None:
        if time.monotonic() > deadline:
            _kill_group(process)
            reported = _report_new(rows_path, reported, on_row)
            return True
        time.sleep(POLL_S)
        reported = _report_new(rows_path, reported, on_row)
    _report_new(rows_path, reported, on_row)
    return False


def _report_new(rows_path: Path, reported: int, on_row: Callable[[ResultRow], None]) -> int:
    if not rows_path.exists():
        return reported
    lines = [line for line in rows_path.read_text().splitlines() if line.strip()]
    for line in lines[reported:]:
        try:
            on_row(ResultRow.model_validate_json(line))
        except ValidationError:
            break
        reported += 1
    return reported


def _kill_group(process: WorkerProcess) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _read_rows(rows_path: Path, cases: list[str]) -> dict[str, ResultRow]:
    """Rows the worker wrote, keyed by case; a torn last line (a crash mid-write) is ignored."""
    rows: dict[str, ResultRow] = {}
    if not rows_path.exists():
        return rows
    for line in rows_path.read_text().splitlines():
        try:
            row = ResultRow.model_validate_json(line)
        except ValidationError:
            continue
        if row.case in cases and row.case not in rows:
            rows[row.case] = row
    return rows


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"died of {signal.Signals(-code).name}"
        except ValueError:
            return f"died of signal {-code}"
    return f"exited with code {code}"


def _last_line(log_path: Path) -> str:
    lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"

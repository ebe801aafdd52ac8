"""The worker process: scores one task, all its cases, and appends one JSON row per case to its rows file.

Started by the runner, one process per task (forked from a pre-imported server, or as `python -m fastkernels.worker
<job.json>`: launch.py), so whatever a candidate does (raise, hang, segfault, corrupt the CUDA context) ends this
process at worst, never the run. Rows are appended and fsynced as each case finishes, so a crash loses only the case
in flight.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict

from fastkernels.config import BaselineConfig, HardwareProfile, HarnessConfig
from fastkernels.phases import phase
from fastkernels.records import ResultRow, Status
from fastkernels.row_signing import mac_path, sign
from fastkernels.gpu_processes import vouch_for_children
from fastkernels.warden import run_warded


class WorkerJob(BaseModel):
    """Everything a worker needs; written by the runner as JSON next to the rows file."""

    model_config = ConfigDict(extra="forbid")

    task: str
    cases: list[str]
    device: str
    profile: HardwareProfile
    harness: HarnessConfig
    baseline: BaselineConfig
    agent: str
    candidate_dir: str | None
    mode: str
    rows_path: str
    tasks_root: str


def row_base(job: WorkerJob, level: int, categories: list[str], case: str, device_name: str) -> dict[str, Any]:
    """Fields every row of this job shares."""
    return dict(
        task=job.task, level=level, categories=categories, case=case, mode=job.mode, agent=job.agent,
        baseline=job.baseline.name, device=device_name, hardware=job.profile.name, seed=job.harness.seed,
    )


def append_row(path: Path, row: ResultRow, key: bytes) -> None:
    """Append `row` to the rows file, its MAC to the MAC file first (fastkernels.row_signing); both fsynced."""
    line = row.model_dump_json()
    for target, text in ((mac_path(path), sign(key, line)), (path, line)):
        with target.open("a") as handle:
            handle.write(text + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def run_job(job: WorkerJob, row_key: bytes) -> None:
    """Score the job's cases; `row_key` signs every row (it reaches no module global: see fastkernels.row_signing)."""
    import torch

    forked = ""
    preloaded = sys.modules.get("fastkernels.preload")  # present when forked from the fork server
    if preloaded is not None:  # what the server's imports saw of the import-time environment
        under = " ".join(f"{key}={value}" for key, value in preloaded.IMPORTED_UNDER.items() if value)
        forked = f"; forked from the preloaded server, imported under {under or 'no import-time variables'}"
    phase(f"torch imported ({torch.get_num_threads()} CPU threads{forked})")
    from fastkernels.inductor_fixes import install, torch_release

    fixes = install()  # before any baseline compiles and before the integrity snapshot
    if fixes:
        phase(f"Inductor fixes for torch {torch_release()} (fastkernels.inductor_fixes): {'; '.join(fixes)}")
    from fastkernels.judge import JudgeClient, JudgeSpec
    from fastkernels.registry import Registry

    rows_path = Path(job.rows_path)

    def write_row(row: ResultRow) -> None:
        append_row(rows_path, row, row_key)

    registry = Registry(Path(job.tasks_root))
    manifest = registry.get(job.task)
    # The judge process holds every reference output; started before any candidate code is imported, and before
    # this process touches the GPU (so it can be forked).
    judge = JudgeClient(JudgeSpec(job.tasks_root, job.task, job.device, job.harness.seed,
                                  job.harness.correctness_rounds))
    try:
        device_name = torch.cuda.get_device_name() if job.device == "cuda" else "cpu"
        candidate_dir = Path(job.candidate_dir) if job.candidate_dir is not None else None
        clock = make_clock(job)  # binds the timers before any candidate code is imported
        flush = None
        if job.harness.flush_l2:
            from fastkernels.cache import cache_flush

            flush, note = cache_flush(job.device, job.profile.l2_cache_mb)
            phase(note)
        phase("judge, clock and cache flush started")
        vouch_for_children()  # before any candidate code: the processes below this one allowed on the GPU
        _score_cases(job, registry, manifest, device_name, candidate_dir, clock, flush, judge, write_row)
    finally:
        judge.close()


def _score_cases(job, registry, manifest, device_name, candidate_dir, clock, flush, judge, write_row) -> None:
    from fastkernels.case_caches import PicksChanged
    from fastkernels.garbage_collector import freeze_harness_objects
    from fastkernels.integrity import Integrity
    from fastkernels.plan import one_line, plan_task

    per_case_caches = job.harness.compile_caches == "per_case"
    try:
        picks = _per_case_cache_setup() if per_case_caches else None
    except (ValueError, PicksChanged) as error:
        for case in job.cases:
            base = row_base(job, manifest.level, manifest.categories, case, device_name)
            write_row(ResultRow(**base, status=Status.BASELINE_ERROR, reason=one_line(error)))
        return
    snapshot: list[Integrity] = []

    def before_candidate() -> None:  # the harness's objects frozen and its state recorded, before candidate code runs
        freeze_harness_objects()
        refusals = None
        if candidate_dir is not None and job.harness.audit_guard:
            from fastkernels.audit_guard import install

            refusals = install(candidate_dir, [Path(job.tasks_root), Path(__file__).resolve().parent])
        snapshot.append(Integrity({"the clock": clock, "the cache flush": flush, "the judge client": judge},
                                  refusals))

    try:
        plan = plan_task(registry, job.task, job.device, job.baseline, candidate_dir, job.mode,
                         before_candidate=before_candidate)
    except Exception as error:  # noqa: BLE001 - a task that cannot be planned is a benchmark defect
        for case in job.cases:
            base = row_base(job, manifest.level, manifest.categories, case, device_name)
            write_row(ResultRow(**base, status=Status.BASELINE_ERROR, reason=one_line(error)))
        return
    phase("baselines and candidate loaded")
    integrity = snapshot[0]
    patched = integrity.changed()
    caches_root = Path(tempfile.mkdtemp(prefix="fk-compile-caches-")) if per_case_caches else None
    try:
        for case in job.cases:
            base = row_base(job, manifest.level, manifest.categories, case, device_name)
            if patched:
                reason = f"importing the candidate patched or reconfigured harness or library code: {patched}"
                write_row(ResultRow(**base, status=Status.REWARD_HACK, reason=reason))
                continue
            row = _score_case(job, plan, case, base, clock, flush, judge, integrity, caches_root, picks)
            write_row(row)
            phase(f"case {case} {row.status.value}")
    finally:
        if caches_root is not None:
            shutil.rmtree(caches_root, ignore_errors=True)


def _per_case_cache_setup():
    """Before any candidate code: the run's trusted tuning picks, and Inductor compiling in this process (its compile
    pool would keep the cache directory it started with; fastkernels/case_caches.py)."""
    import torch._inductor.config as inductor_config

    from fastkernels.case_caches import TrustedPicks

    inductor_config.compile_threads = 1
    picks = TrustedPicks.from_environment()
    if picks is not None:
        picks.verify()
    return picks


def _score_case(job, plan, case, base, clock, flush, judge, integrity, caches_root, picks) -> ResultRow:
    """One case, in compile caches of its own when `caches_root` is given."""
    from fastkernels.case_caches import PicksChanged, case_compile_caches
    from fastkernels.clocks import read_clocks
    from fastkernels.evaluate import CaseContext, evaluate_case

    context = CaseContext(plan, case, job.device, job.harness, job.profile, clock, flush, base, judge, integrity,
                          read_clocks=(lambda: read_clocks(0)) if job.device == "cuda" else None)
    if caches_root is None:
        return evaluate_case(context)
    try:
        with case_compile_caches(caches_root, picks, integrity):
            return evaluate_case(context)
    except PicksChanged as error:  # it had the run's hash when this worker started, before the candidate's import
        return ResultRow(**base, status=Status.REWARD_HACK, reason=f"{error}: changed after the candidate's import")


def make_clock(job: WorkerJob):
    """The clock `harness.timing` asks for: CUDA events on a GPU and the host clock on the CPU by default."""
    import torch

    from fastkernels.timing import CudaEventClock, HostClock

    method = job.harness.timing
    if method == "auto":
        method = "cuda_events" if job.device == "cuda" else "host_clock"
    if method == "cuda_events":
        if job.device != "cuda":
            raise ValueError("harness.timing=cuda_events needs a GPU; use host_clock on the CPU")
        return CudaEventClock(pad_us=job.harness.launch_pad_us, max_pad_us=job.harness.launch_pad_max_us,
                              decay_after=job.harness.launch_pad_decay_after)
    return HostClock(torch.cuda.synchronize if job.device == "cuda" else None)


def main(argv: list[str] | None = None, row_key: bytes | None = None) -> NoReturn:
    """`python -m fastkernels.worker JOB.json`, the row key in hex on stdin (or `row_key` from a forked start)."""
    args = sys.argv[1:] if argv is None else argv
    if row_key is None:
        row_key = bytes.fromhex(sys.stdin.readline().strip())
        if not row_key:
            raise SystemExit("fastkernels.worker: no row key on stdin (the runner passes one: fastkernels.row_signing)")
    job = WorkerJob.model_validate(json.loads(Path(args[0]).read_text()))
    key = row_key

    def score() -> int:
        run_job(job, key)
        return 0

    run_warded(score)  # this process stays behind as the worker's warden (warden.py) and exits with its status


if __name__ == "__main__":
    main()

"""The run, stage by stage (DESIGN.md): session, registry, candidates, workers, records, MacroEval, artifacts."""

from __future__ import annotations

import logging
import signal
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

from fastkernels.artifacts import write_json, write_jsonl
from fastkernels.clock_policy import apply_clock_policy
from fastkernels.clocks import read_clocks
from fastkernels.config import CONF_DIR, PROJECT_ROOT, TASKS_DIR, ConfigError, RunConfig
from fastkernels.environment import drift_message, fingerprint
from fastkernels.hardware import detect_device, device_count, load_profiles, resolve_profile
from fastkernels.macroeval import KernelLevelReport, format_table, kernel_level
from fastkernels.progress import Progress
from fastkernels.records import ResultRow
from fastkernels.registry import Registry, cases_to_run
from fastkernels.runner import run_task
from fastkernels.scale import lane_count, run_ray, run_threads, serial_pin
from fastkernels.worker import WorkerJob

log = logging.getLogger("fastkernels")


def candidate_dir(config: RunConfig) -> Path | None:
    """The agent's candidate set: None for noop; relative paths are tried from the cwd, then the project root."""
    if config.agent.name == "noop" or config.agent.path is None:
        if config.agent.name != "noop":
            raise ConfigError(f"agent.path is not set for agent={config.agent.name}")
        return None
    path = Path(config.agent.path).expanduser()
    for base in ([Path.cwd(), PROJECT_ROOT] if not path.is_absolute() else [Path("/")]):
        if (base / path).is_dir():
            return (base / path).resolve()
    raise ConfigError(f"agent.path={config.agent.path}: no such directory (agent={config.agent.name})")


_received: list[str] = []  # the signals signals_end_the_run turned into SystemExit, for env.json's `interrupted`


@contextmanager
def signals_end_the_run() -> Iterator[None]:
    """SIGTERM and SIGHUP (a scheduler's time limit, a closed terminal) raise SystemExit for the run's duration, as
    Ctrl-C raises KeyboardInterrupt, so the run ends its workers and writes the rows finished so far instead of dying
    with them unwritten (the default action). Entered before the clock policy, whose handlers chain to these."""
    if threading.current_thread() is not threading.main_thread():  # signal.signal only works there
        yield
        return
    names = [name for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    _received.clear()

    def handler(signum: int, _: Any) -> None:
        _received.append(signal.Signals(signum).name)  # Ray's ray.wait re-raises SystemExit as SystemExit(1)
        raise SystemExit(128 + signum)

    previous = {getattr(signal, name): signal.signal(getattr(signal, name), handler) for name in names}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)


def run(config: RunConfig, run_dir: Path, tasks_root: Path = TASKS_DIR) -> tuple[list[ResultRow], KernelLevelReport]:
    started = time.time()
    device = detect_device()
    profiles = load_profiles(CONF_DIR)
    profile = resolve_profile(config.hardware, device, profiles)
    device_kind = "cuda" if profile.kind == "cuda" else "cpu"
    if config.harness.timing == "cuda_events" and device_kind != "cuda":
        raise ConfigError("harness.timing=cuda_events needs a GPU profile; this run is on the CPU (use host_clock)")
    candidates = candidate_dir(config)
    registry = Registry(tasks_root)
    manifests = registry.select(config.tasks)
    tier = config.harness.case_tier if config.harness.case_tier != "auto" else ("gpu" if device_kind == "cuda" else "cpu")
    work = cases_to_run(manifests, tier, config.tasks.cases)
    log.info(
        "hardware=%s (%s) agent=%s baseline=%s mode=%s clocks=%s: %d tasks, %d cases (tier %s)",
        profile.name, device.name, config.agent.name, config.baseline.name, config.mode, config.clocks.policy,
        len(work), sum(len(c) for _, c in work), tier,
    )
    workers = run_dir / "workers"
    workers.mkdir(parents=True, exist_ok=True)
    rows: list[ResultRow] = []
    reported: list[ResultRow] = []  # verified rows in the order cases finished: what an interrupted run writes
    completed = False
    lanes = lane_count(config.scale, device_kind, device_count())
    with ExitStack() as policies:
        policies.enter_context(signals_end_the_run())
        clocks = policies.enter_context(apply_clock_policy(config.clocks.policy, profile, device.device_index))
        if device_kind == "cuda" and config.scale.ray_address is None:  # every local GPU a lane uses, same policy
            for index in range(1, lanes):
                policies.enter_context(apply_clock_policy(config.clocks.policy, profile, index))
        environment = fingerprint(device, profile, PROJECT_ROOT)  # after any lock, so env.json shows it
        if (drift := drift_message(environment)) is not None:
            log.warning("%s", drift)
        environment["clock_policy"] = clocks.summary()
        environment["task_clocks"] = []
        write_json(run_dir / "env.json", environment)
        progress = Progress(sum(len(cases) for _, cases in work))

        def on_row(row: ResultRow) -> None:
            reported.append(row)
            progress.row(row)

        jobs = [
            (WorkerJob(
                task=manifest.name, cases=cases, device=device_kind, profile=profile, harness=config.harness,
                baseline=config.baseline, agent=config.agent.name,
                candidate_dir=str(candidates) if candidates is not None else None, mode=config.mode,
                rows_path=str(workers / f"{manifest.name}.rows.jsonl"), tasks_root=str(registry.root),
            ), manifest)
            for manifest, cases in work
        ]
        environment["scale"] = {**config.scale.model_dump(), "lanes": lanes}
        try:
            if config.scale.backend == "serial":
                for job, manifest in jobs:
                    clocks.before_task()
                    rows.extend(run_task(job, manifest, workers, on_row, env=serial_pin(device_kind)))
                    task_clocks = clocks.after_task()
                    environment["task_clocks"].append({"task": manifest.name, **task_clocks.model_dump(mode="json")})
                    write_jsonl(run_dir / "results.jsonl", rows)
            elif config.scale.backend == "threads":
                rows.extend(run_threads(jobs, workers, lanes, device_kind, on_row, run_task,
                                        lambda index: resolve_profile(profile, detect_device(index), profiles)))
            else:
                rows.extend(run_ray(jobs, workers, lanes, device_kind, profile, config.scale, on_row))
            completed = True
        except BaseException as stop:
            environment["interrupted"] = _interruption(stop)
            log.error("run interrupted (%s): results.jsonl holds the %d verified rows finished so far",
                      environment["interrupted"], len(reported))
            raise
        finally:
            progress.close()
            write_jsonl(run_dir / "results.jsonl", rows if completed else reported)
            after = read_clocks(device.device_index) if device_kind == "cuda" else None
            environment["clocks_after"] = after.model_dump(mode="json") if after is not None else None
            environment["clocks_before"] = environment.pop("clocks", None)
            environment["wall_s"] = round(time.time() - started, 3)
            write_json(run_dir / "env.json", environment)
    environment["clock_policy"] = clocks.summary()
    write_json(run_dir / "env.json", environment)
    report = kernel_level(rows)
    write_json(run_dir / "macroeval.json", {"kernel_level": report.model_dump(mode="json"), "end_to_end": None})
    flagged = [row for row in rows if row.review]
    if flagged:
        first = flagged[0]
        log.warning("%d of %d rows carry a review note (results.jsonl `review`), e.g. %s/%s: %s",
                    len(flagged), len(rows), first.task, first.case, first.review)
    log.info("results in %s\n%s", run_dir, format_table(report))
    return rows, report


def _interruption(stop: BaseException) -> str:
    """What ended the run early, for env.json's `interrupted`."""
    if _received:
        return _received[0]
    if isinstance(stop, KeyboardInterrupt):
        return "SIGINT"
    if isinstance(stop, SystemExit) and isinstance(stop.code, int) and stop.code > 128:
        try:
            return signal.Signals(stop.code - 128).name
        except ValueError:
            pass
    return f"{type(stop).__name__}: {str(stop).splitlines()[0] if str(stop) else ''}".rstrip(": ")

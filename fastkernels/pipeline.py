"""The run, stage by stage (DESIGN.md): session, registry, candidates, workers, records, MacroEval, artifacts."""

from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from pathlib import Path

from fastkernels.artifacts import write_json, write_jsonl
from fastkernels.clock_policy import apply_clock_policy
from fastkernels.clocks import read_clocks
from fastkernels.config import CONF_DIR, PROJECT_ROOT, TASKS_DIR, ConfigError, RunConfig
from fastkernels.environment import drift_message, fingerprint
from fastkernels.hardware import detect_device, device_count, load_profiles, resolve_profile
from fastkernels.macroeval import KernelLevelReport, format_table, kernel_level
from fastkernels.progress import Progress
from fastkernels.records import ResultRow
from fastkernels.registry import Registry
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
    work = [(m, [c.name for c in m.cases if c.tier == tier]) for m in manifests]
    work = [(m, cases) for m, cases in work if cases]
    log.info(
        "hardware=%s (%s) agent=%s baseline=%s mode=%s clocks=%s: %d tasks, %d cases (tier %s)",
        profile.name, device.name, config.agent.name, config.baseline.name, config.mode, config.clocks.policy,
        len(work), sum(len(c) for _, c in work), tier,
    )
    workers = run_dir / "workers"
    workers.mkdir(parents=True, exist_ok=True)
    rows: list[ResultRow] = []
    lanes = lane_count(config.scale, device_kind, device_count())
    with ExitStack() as policies:
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
                    rows.extend(run_task(job, manifest, workers, progress.row, env=serial_pin(device_kind)))
                    task_clocks = clocks.after_task()
                    environment["task_clocks"].append({"task": manifest.name, **task_clocks.model_dump(mode="json")})
                    write_jsonl(run_dir / "results.jsonl", rows)
            elif config.scale.backend == "threads":
                rows.extend(run_threads(jobs, workers, lanes, device_kind, progress.row, run_task,
                                        lambda index: resolve_profile(profile, detect_device(index), profiles)))
            else:
                rows.extend(run_ray(jobs, workers, lanes, device_kind, profile, config.scale, progress.row))
        finally:
            progress.close()
            write_jsonl(run_dir / "results.jsonl", rows)
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

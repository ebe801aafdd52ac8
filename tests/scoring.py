"""Test helper: score one candidate directory on one task's CPU cases through a real worker process."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir

from fastkernels.config import CONF_DIR, RunConfig
from fastkernels.hardware import load_profiles
from fastkernels.records import ResultRow
from fastkernels.registry import Registry
from fastkernels.runner import run_task
from fastkernels.worker import WorkerJob


def cpu_job(agent_dir: Path | None, work_dir: Path, task: str = "rms_norm", *overrides: str) -> tuple[WorkerJob, object]:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["hardware=cpu", "harness.iterations=8", "harness.warmup=1",
                                                      "harness.max_iterations=24",
                                                      *overrides])
    config = RunConfig.from_omegaconf(cfg)
    registry = Registry()
    manifest = registry.get(task)
    job = WorkerJob(
        task=task, cases=[c.name for c in manifest.cases if c.tier == "cpu"], device="cpu",
        profile=load_profiles(CONF_DIR)["cpu"], harness=config.harness, baseline=config.baseline,
        agent="test", candidate_dir=str(agent_dir) if agent_dir else None, mode="independent",
        rows_path=str(work_dir / "rows.jsonl"), tasks_root=str(registry.root),
    )
    return job, manifest


def score(agent_dir: Path | None, work_dir: Path, task: str = "rms_norm", *overrides: str) -> list[ResultRow]:
    job, manifest = cpu_job(agent_dir, work_dir, task, *overrides)
    seen: list[ResultRow] = []
    rows = run_task(job, manifest, work_dir, seen.append)
    assert [row.case for row in rows] == job.cases and len(seen) == len(rows)
    return rows

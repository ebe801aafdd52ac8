"""Each task runs in its own worker process: a candidate that raises, hangs, segfaults, computes the wrong thing,
does not import or has the wrong signature gets its own status, and the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from fastkernels.config import CONF_DIR, RunConfig
from fastkernels.hardware import load_profiles
from fastkernels.records import Status
from fastkernels.registry import Registry
from fastkernels.runner import run_task
from fastkernels.worker import WorkerJob

CANDIDATES = Path(__file__).parent / "candidates"


def job_for(agent_dir: Path | None, tmp_path: Path, timeout_s: float = 120) -> tuple[WorkerJob, object]:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["hardware=cpu", f"harness.timeout_s={timeout_s}",
                                                      "harness.iterations=5", "harness.warmup=1"])
    config = RunConfig.from_omegaconf(cfg)
    registry = Registry()
    manifest = registry.get("rms_norm")
    job = WorkerJob(
        task="rms_norm", cases=[c.name for c in manifest.cases if c.tier == "cpu"], device="cpu",
        profile=load_profiles(CONF_DIR)["cpu"], harness=config.harness, baseline=config.baseline,
        agent="test", candidate_dir=str(agent_dir) if agent_dir else None, mode="independent",
        rows_path=str(tmp_path / "rows.jsonl"), tasks_root=str(registry.root),
    )
    return job, manifest


def score(name: str, tmp_path: Path, timeout_s: float = 120):
    job, manifest = job_for(CANDIDATES / name, tmp_path, timeout_s)
    seen = []
    rows = run_task(job, manifest, tmp_path, seen.append)
    assert [row.case for row in rows] == job.cases and len(seen) == len(rows)
    return rows


@pytest.mark.parametrize(
    "name, status, words",
    [
        ("crash", Status.RUNTIME_ERROR, "kernel launch failed"),
        ("segfault", Status.RUNTIME_ERROR, "SIGSEGV"),
        ("wrong", Status.INCORRECT, "elements outside"),
        ("noimport", Status.COMPILE_ERROR, "fastkernels_no_such_extension"),
        ("badsig", Status.RUNTIME_ERROR, "interface mismatch"),
    ],
)
def test_a_broken_candidate_gets_its_own_status_on_every_case(name, status, words, tmp_path):
    rows = score(name, tmp_path)
    assert all(row.status is status and words in row.reason for row in rows), [r.reason for r in rows]
    assert all(row.speedup is None for row in rows)


def test_a_hanging_candidate_is_killed_at_the_timeout(tmp_path):
    rows = score("hang", tmp_path, timeout_s=15)
    assert all(row.status is Status.TIMEOUT and "15 s" in row.reason for row in rows)


def test_a_missing_candidate_is_not_attempted_and_stands_in_at_one(tmp_path):
    rows = score("no_such_agent", tmp_path)
    assert all(row.status is Status.NOT_ATTEMPTED and row.speedup == 1.0 and row.baseline_ms > 0 for row in rows)


def test_the_noop_agent_passes_at_speedup_one_within_noise(tmp_path):
    job, manifest = job_for(None, tmp_path)
    rows = run_task(job, manifest, tmp_path, lambda row: None)
    assert all(row.status is Status.PASSED and row.candidate_error.worst_ratio <= 1 for row in rows)
    assert all(0.5 < row.speedup < 2.0 for row in rows)  # host-clock noise on a shared CPU; the GPU bound is tighter

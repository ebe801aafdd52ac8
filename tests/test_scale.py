"""Sharding tasks over devices: every backend gives the rows a serial run gives, lanes never share a GPU, and a task
refuses hardware that does not match the run's profile. The Ray test starts a real local Ray cluster on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fastkernels.config import ConfigError, ScaleConfig
from fastkernels.hardware import HardwareMismatch, load_profiles
from fastkernels.config import CONF_DIR
from fastkernels.records import ResultRow, Status
from fastkernels.scale import _score_remotely, lane_count, physical_gpus, run_threads, serial_pin
from fastkernels.worker import WorkerJob

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["hardware=cpu", "agent=reference", "tasks.include=[silu_and_mul,rms_norm,softmax]", "harness.warmup=1",
         "harness.iterations=4", "harness.max_iterations=4", "harness.correctness_rounds=3"]


def run(run_dir: Path, *overrides: str) -> list[dict]:
    command = [sys.executable, "-m", "fastkernels", f"hydra.run.dir={run_dir}", *QUICK, *overrides]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def verdicts(rows: list[dict]) -> list[tuple]:
    """What must not depend on the lane a task ran on: which rows, in which order, their status and errors."""
    return [(r["task"], r["case"], r["status"], r["candidate_error"], r["baseline_impl"]) for r in rows]


@pytest.fixture(scope="module")
def serial_rows(tmp_path_factory) -> list[dict]:
    return run(tmp_path_factory.mktemp("serial") / "run")


def test_two_thread_lanes_give_the_rows_of_a_serial_run(serial_rows, tmp_path):
    rows = run(tmp_path / "run", "scale=threads", "scale.devices=2")
    assert verdicts(rows) == verdicts(serial_rows)
    env = json.loads((tmp_path / "run" / "env.json").read_text())
    assert env["scale"] == {"backend": "threads", "devices": 2, "ray_address": None, "cpus_per_task": None,
                            "lanes": 2}


def test_a_local_ray_cluster_gives_the_rows_of_a_serial_run(serial_rows, tmp_path):
    pytest.importorskip("ray")
    rows = run(tmp_path / "run", "scale=ray", "scale.devices=2", "scale.cpus_per_task=2")
    assert verdicts(rows) == verdicts(serial_rows)
    assert {row["status"] for row in rows} <= {"PASSED", "NOT_ATTEMPTED"}
    # Ray narrows a task's threads to the CPUs it reserved (one by default: lanes ran single-threaded)
    for log in (tmp_path / "run" / "workers").glob("*.log"):
        assert "torch imported (2 CPU threads" in log.read_text(), log.name


def test_lane_count_follows_the_backend_and_the_visible_gpus():
    assert lane_count(ScaleConfig(backend="serial", devices=8), "cuda", 8) == 1
    assert lane_count(ScaleConfig(backend="threads"), "cuda", 4) == 4
    assert lane_count(ScaleConfig(backend="ray", devices=2), "cuda", 4) == 2
    assert lane_count(ScaleConfig(backend="threads"), "cpu", 0) == 1
    with pytest.raises(ConfigError, match="scale.devices=3 but only 2 GPUs are visible"):
        lane_count(ScaleConfig(backend="threads", devices=3), "cuda", 2)


def test_lanes_honour_the_gpus_the_run_was_given(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6,7")
    assert physical_gpus(2) == ["4", "6"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert physical_gpus(2) == ["0", "1"]


def test_a_serial_gpu_run_pins_its_workers_to_its_one_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert serial_pin("cuda") == {"CUDA_VISIBLE_DEVICES": "3"}
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert serial_pin("cuda") == {"CUDA_VISIBLE_DEVICES": "0"}
    assert serial_pin("cpu") == {}


def test_thread_lanes_pin_each_worker_to_one_gpu_and_never_share_it(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    profile = load_profiles(CONF_DIR)["cpu"]
    busy: set[str] = set()
    seen: list[str] = []
    lock = threading.Lock()
    checked: list[int] = []

    def fake_run_task(job, manifest, work_dir, on_row, env, stop=None):
        gpu = env["CUDA_VISIBLE_DEVICES"]
        with lock:
            assert gpu not in busy, "two tasks on one GPU at once"
            busy.add(gpu)
            seen.append(gpu)
        time.sleep(0.05)
        with lock:
            busy.discard(gpu)
        return [ResultRow(task=job.task, level=1, categories=["x"], case=job.cases[0], mode="independent",
                          agent="noop", baseline="production", device="", hardware="h200", seed=0,
                          status=Status.NOT_ATTEMPTED)]

    class FakeManifest:
        level = 1

    jobs = [(job_for(f"task_{i}", profile), FakeManifest()) for i in range(6)]
    rows = run_threads(jobs, Path("/tmp"), 2, "cuda", lambda row: None, fake_run_task, checked.append)
    assert [row.task for row in rows] == [f"task_{i}" for i in range(6)]  # the run's order, not the lanes'
    assert set(seen) == {"4", "6"} and sorted(checked) == [0, 1]


def test_a_ray_task_refuses_a_device_that_does_not_match_the_profile(tmp_path):
    h200 = load_profiles(CONF_DIR)["h200"]
    job = job_for("silu_and_mul", h200)
    with pytest.raises(HardwareMismatch, match="hardware=h200"):
        _score_remotely(job.model_dump_json(), str(tmp_path), h200.model_dump_json(), "cuda")


def job_for(task: str, profile) -> WorkerJob:
    from fastkernels.config import BaselineConfig, HarnessConfig
    import yaml

    harness = HarnessConfig.model_validate(yaml.safe_load((CONF_DIR / "harness" / "default.yaml").read_text()))
    return WorkerJob(task=task, cases=["cpu_odd"], device="cpu", profile=profile, harness=harness,
                     baseline=BaselineConfig(name="production"), agent="noop", candidate_dir=None,
                     mode="independent", rows_path="/tmp/none.jsonl", tasks_root=str(ROOT / "tasks"))

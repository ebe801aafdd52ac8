"""`hydra/launcher=fastkernels_slurm`: a sweep becomes one Slurm job array per hardware profile, placed by the profile,
and a job refuses hardware that does not match. Slurm itself is faked (tests/fake_slurm: sbatch, srun, sacct run the
jobs on this machine); hydra-submitit-launcher, submitit and the benchmark are real."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fastkernels.config import ConfigError

pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
from fastkernels.slurm import hardware_of, placement, slurm_params  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAKE_SLURM = Path(__file__).parent / "fake_slurm"
QUICK = ["tasks.include=[silu_and_mul]", "harness.warmup=1", "harness.iterations=4", "harness.max_iterations=4"]


def sweep(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{FAKE_SLURM}:{os.environ['PATH']}", "FAKE_SLURM_DIR": str(tmp_path / "slurm")}
    command = [sys.executable, "-m", "fastkernels", "-m", "hydra/launcher=fastkernels_slurm",
               f"hydra.sweep.dir={tmp_path / 'sweep'}", f"hydra.launcher.submitit_folder={tmp_path / 'submitit'}",
               *QUICK, *overrides]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def scripts(tmp_path: Path) -> list[str]:
    return [path.read_text() for path in sorted((tmp_path / "slurm").glob("*.sbatch"))]


def test_a_profile_places_its_jobs_and_a_job_override_wins():
    h100 = slurm_params(placement("h100", []))
    assert h100["constraint"] == "h100" and h100["gres"] == "gpu:1" and h100["tasks_per_node"] == 1
    assert "partition" not in h100  # site-specific: unset unless the user names one
    assert slurm_params(placement("h100", ["hardware.slurm.partition=gpu-h100"]))["partition"] == "gpu-h100"
    assert "gres" not in slurm_params(placement("cpu", []))


def test_auto_hardware_cannot_be_placed():
    with pytest.raises(ConfigError, match="needs a concrete hardware profile"):
        placement("auto", [])
    assert hardware_of(["agent=noop", "hardware=a100"], "auto") == "a100"
    assert hardware_of(["agent=noop"], "h200") == "h200"


def test_a_cpu_sweep_runs_as_one_job_array_with_the_cpu_placement(tmp_path):
    done = sweep(tmp_path, "hardware=cpu", "agent=noop,reference")
    assert done.returncode == 0, done.stderr[-3000:]
    (script,) = scripts(tmp_path)
    assert "#SBATCH --array=0-1%2" in script and "#SBATCH --cpus-per-task=2" in script
    assert "#SBATCH --mem=16GB" in script and "--gres" not in script
    runs = sorted(path.parent for path in (tmp_path / "sweep").glob("*/results.jsonl"))
    assert len(runs) == 2
    for run in runs:
        rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
        assert rows and all(row["status"] in ("PASSED", "NOT_ATTEMPTED") for row in rows)


def test_each_hardware_gets_its_own_array_and_a_job_on_the_wrong_hardware_refuses(tmp_path):
    done = sweep(tmp_path, "hardware=cpu,h100", "agent=noop")
    assert done.returncode != 0  # the h100 job found no H100
    cpu_script, h100_script = scripts(tmp_path)
    assert "--gres" not in cpu_script
    assert "#SBATCH --constraint=h100" in h100_script and "#SBATCH --gres=gpu:1" in h100_script
    assert list((tmp_path / "sweep").glob("*_cpu_noop/results.jsonl"))  # the cpu job ran to the end
    logs = "".join(path.read_text() for path in (tmp_path / "submitit").glob("*_log.err"))
    assert re.search(r"hardware=h100 expects a GPU matching", logs + done.stderr)
    assert not list((tmp_path / "sweep").glob("*_h100_noop/results.jsonl"))

"""hydra/launcher=fastkernels_slurm against a real Slurm controller (scripts/slurm-local.sh starts a one-node one):
a two-job sweep runs as one job array placed by the cpu profile's slurm block, and each run's env.json names the
Slurm job it was. Skipped where no Slurm controller answers (CI); tests/test_slurm_launcher.py drives submitit against
fake sbatch/srun/sacct everywhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def slurm_answers() -> bool:
    if shutil.which("sinfo") is None:
        return False
    done = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    return done.returncode == 0 and "idle" in done.stdout


@pytest.mark.skipif(not slurm_answers(), reason="no Slurm controller with an idle node here")
def test_a_sweep_runs_as_one_slurm_job_array_and_each_run_names_its_job(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fastkernels", "-m", "hydra/launcher=fastkernels_slurm",
                           "hardware=cpu", "agent=noop", "tasks=smoke", "tasks.include=[rms_norm]",
                           "harness.seed=0,1", f"hydra.sweep.dir={tmp_path}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = sorted(path.parent for path in tmp_path.glob("*/results.jsonl"))
    assert len(runs) == 2
    jobs = []
    for run in runs:
        rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
        assert rows and {row["status"] for row in rows} == {"PASSED"}
        scheduler = json.loads((run / "env.json").read_text())["scheduler"]
        assert scheduler["kind"] == "slurm"
        jobs.append((scheduler["SLURM_ARRAY_JOB_ID"], scheduler["SLURM_ARRAY_TASK_ID"]))
    assert len({job for job, _ in jobs}) == 1 and sorted(task for _, task in jobs) == ["0", "1"]
    script = next(tmp_path.glob(".submitit/*/*_submission.sh")).read_text()
    assert "#SBATCH --cpus-per-task=2" in script and "#SBATCH --mem=16GB" in script and "#SBATCH --array=0-1" in script

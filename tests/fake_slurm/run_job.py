"""Runs the array tasks of one fake sbatch submission one after another, as a one-node cluster would."""
import os
import subprocess
import sys
import time
from pathlib import Path

job_id, tasks, script, array = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "array"
state = Path(os.environ["FAKE_SLURM_DIR"])
time.sleep(1.0)  # submitit renames the task pickles after sbatch returns
for task in range(tasks):
    (state / f"{job_id}_{task}.state").write_text("RUNNING")
    ids = {"SLURM_JOB_ID": f"{int(job_id) + task}", "SLURM_ARRAY_JOB_ID": job_id, "SLURM_ARRAY_TASK_ID": str(task)}
    env = {**os.environ, **(ids if array else {"SLURM_JOB_ID": job_id}), "SLURM_NTASKS": "1", "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
           "SLURM_NODEID": "0", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_NODELIST": "fakenode"}
    code = subprocess.run(["bash", script], env=env).returncode
    (state / f"{job_id}_{task}.state").write_text("COMPLETED" if code == 0 else "FAILED")

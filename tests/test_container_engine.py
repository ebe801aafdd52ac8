"""runner=container against a real engine: the CPU image (scripts/build-images.sh cpu --engine podman) runs the
composed config with no network and writes the rows and env.json into the run
directory on the host. Skipped where podman or the image is missing (CI builds no image: it takes ~10 minutes);
tests/test_container.py checks the composed commands against fake engines everywhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def podman_image(name: str) -> bool:
    if shutil.which("podman") is None:
        return False
    done = subprocess.run(["podman", "image", "exists", name], capture_output=True, timeout=60)
    return done.returncode == 0


@pytest.mark.skipif(not podman_image("fastkernels:cpu"), reason="no podman with the fastkernels:cpu image here")
def test_a_noop_run_inside_the_cpu_image_passes_on_the_locked_stack(tmp_path):
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "fastkernels", "runner=container", "runner.engine=podman",
                           "hardware=cpu", "agent=noop", "tasks=smoke", "tasks.include=[rms_norm]",
                           f"hydra.run.dir={run_dir}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert rows and {row["status"] for row in rows} == {"PASSED"}
    environment = json.loads((run_dir / "env.json").read_text())
    assert environment["container"]["engine"] == "podman" and environment["container"]["returncode"] == 0
    assert environment["lock_drift"] == {}  # the image holds exactly requirements/cpu.lock
    record = json.loads((run_dir / "container.json").read_text())
    assert "--network" in record["command"] and record["command"][record["command"].index("--network") + 1] == "none"

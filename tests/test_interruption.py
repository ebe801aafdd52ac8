"""A run stopped by SIGTERM (a scheduler's time limit, `timeout`) or Ctrl-C ends its workers and still writes the
verified rows finished so far to results.jsonl, with env.json naming what stopped it; it never leaves a hanging
candidate's worker behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HANG = Path(__file__).parent / "candidates" / "hang"


def start(run_dir: Path, *overrides: str) -> subprocess.Popen:
    # embedding first (no candidate in the set: NOT_ATTEMPTED rows), then rms_norm, whose candidate never returns
    command = [sys.executable, "-m", "fastkernels", "hardware=cpu", f"hydra.run.dir={run_dir}", "agent=local",
               f"agent.path={HANG}", "tasks=all", "tasks.include=[embedding,rms_norm]", "harness.timeout_s=600",
               "harness.iterations=4", "harness.warmup=1", "harness.max_iterations=8", *overrides]
    # Ctrl-C as a terminal delivers it to a foreground job: SIGINT at its default, whatever this test process
    # inherited (a suite started in the background with nohup/setsid ignores SIGINT, and so would the run: Python
    # keeps an inherited SIG_IGN, and that, not the harness, made this test time out). Output to a file, which no
    # leftover process can hold open the way it holds a pipe.
    with open(_output_path(run_dir), "w") as output:
        return subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _output_path(run_dir: Path) -> Path:
    return run_dir.parent / f"{run_dir.name}.out"


def wait_for(path: Path, process: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, _output_path(path.parents[1]).read_text()[-2000:]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.2)


@pytest.mark.parametrize("signum, overrides", [
    (signal.SIGTERM, ()), (signal.SIGINT, ()),
    (signal.SIGTERM, ("scale=ray", "scale.devices=1")),  # the cancelled Ray task ends its worker
    (signal.SIGINT, ("scale=threads", "scale.devices=1")),  # the lane thread sees the stop and ends its worker
], ids=["SIGTERM", "SIGINT", "SIGTERM-ray", "SIGINT-threads"])
def test_an_interrupted_run_writes_the_rows_it_finished_and_ends_its_workers(tmp_path, signum, overrides):
    process = start(tmp_path, *overrides)
    try:
        wait_for(tmp_path / "workers" / "rms_norm.log", process)  # embedding is done: rms_norm's worker hangs now
        time.sleep(3)
        process.send_signal(signum)
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:  # say where the run was, so a rare hang can be diagnosed
        process.kill()
        log = (tmp_path / "cli.log").read_text()[-1500:] if (tmp_path / "cli.log").exists() else "(no cli.log)"
        pytest.fail(f"the run did not end within 60 s of {signal.Signals(signum).name}; its output:\n"
                    f"{_output_path(tmp_path).read_text()[-3000:]}\ncli.log:\n{log}")
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode != 0
    time.sleep(1)
    assert not _processes_writing_into(tmp_path), "a worker outlived the interrupted run"
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert rows and {row["task"] for row in rows} == {"embedding"}
    assert all(row["status"] == "NOT_ATTEMPTED" for row in rows)
    environment = json.loads((tmp_path / "env.json").read_text())
    assert environment["interrupted"] == signal.Signals(signum).name
    assert "wall_s" in environment


def _processes_writing_into(run_dir: Path) -> list[int]:
    """Processes holding a file of the run directory open (a live warden, worker or judge holds its task's log)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            targets = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        if any(str(run_dir) in target for target in targets):
            found.append(int(entry.name))
    return found

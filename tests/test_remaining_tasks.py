"""scripts/remaining_tasks.py: what a pass stitched from several device calls still lacks, at one tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import remaining_tasks  # noqa: E402

from fastkernels.registry import Registry  # noqa: E402


def _run(directory: Path, commit: str, rows: list[tuple[str, str]], log_seconds: dict[str, float] | None = None):
    (directory / "workers").mkdir(parents=True)
    (directory / "env.json").write_text(json.dumps({"git_commit": commit, "git_dirty": False}))
    (directory / "results.jsonl").write_text("".join(json.dumps({"task": t, "case": c}) + "\n" for t, c in rows))
    for task, seconds in (log_seconds or {}).items():
        (directory / "workers" / f"{task}.log").write_text(f"[    0.05 s] torch imported\n[{seconds:8.2f} s] done\n")
    return directory


def _gpu_cases(task: str) -> list[str]:
    return [case.name for case in Registry().get(task).cases if case.tier == "gpu"]


def test_a_task_is_left_until_every_gpu_case_has_a_row_at_the_commit(tmp_path):
    silu, gelu = _gpu_cases("silu_and_mul"), _gpu_cases("gelu_and_mul")
    run = _run(tmp_path / "a", "abc1234def", [("silu_and_mul", c) for c in silu] + [("gelu_and_mul", gelu[0])])
    done = subprocess.run([sys.executable, "scripts/remaining_tasks.py", "--commit", "abc1234", str(run)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    line = done.stdout.strip()
    assert line.startswith('FK_TASKS="tasks=all tasks.include=[') and "gelu_and_mul" in line
    assert "silu_and_mul" not in line
    assert f"1 of {len(Registry().names)} tasks done" in done.stderr


def test_a_run_made_at_another_commit_is_refused(tmp_path):
    run = _run(tmp_path / "a", "0000000aaa", [])
    done = subprocess.run([sys.executable, "scripts/remaining_tasks.py", "--commit", "abc1234", str(run)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "git_commit 0000000aaa is not abc1234" in done.stderr


def test_what_is_left_splits_into_calls_of_about_equal_expected_time(tmp_path):
    seconds = {"a": 300.0, "b": 200.0, "c": 100.0, "d": 100.0}
    groups = remaining_tasks.split(["a", "b", "c", "d"], 2, seconds)
    assert sorted(sum(seconds[t] for t in group) for group in groups) == [300.0, 400.0]
    assert remaining_tasks.split(["a", "z"], 5, seconds) == [["a"], ["z"]]  # no more calls than tasks
    times = remaining_tasks.worker_seconds([_run(tmp_path / "old", "x", [], {"moe_experts": 373.2})])
    assert times == {"moe_experts": 373.2}

"""scripts/remaining_tasks.py: what a pass stitched from several device calls still lacks, at one tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import remaining_tasks  # noqa: E402

from fastkernels.registry import Registry  # noqa: E402


def _run(directory: Path, commit: str, rows: list[tuple[str, str]], log_seconds: dict[str, float] | None = None,
         agent: str = "noop"):
    (directory / "workers").mkdir(parents=True)
    (directory / "env.json").write_text(json.dumps({"git_commit": commit, "git_dirty": False}))
    (directory / "results.jsonl").write_text("".join(json.dumps({"task": t, "case": c, "agent": agent}) + "\n"
                                                     for t, c in rows))
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


def test_the_first_call_can_be_sized_to_a_share_of_the_others_since_it_also_runs_the_warm_lanes():
    seconds = {name: 100.0 for name in "abcdefghij"}
    groups = remaining_tasks.split(list("abcdefghij"), 3, seconds, first_share=0.5)
    assert [len(group) for group in groups] == [2, 4, 4]
    assert [len(group) for group in remaining_tasks.split(list("abcdefghij"), 3, seconds)] in ([4, 3, 3], [3, 4, 3],
                                                                                              [3, 3, 4])
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "remaining_tasks.py"), "--commit", "abc123",
                           "--first-call-share", "0"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--first-call-share 0.0: a share in (0, 1]" in done.stderr


def _have(*commits: str) -> bool:
    return all(subprocess.run(["git", "cat-file", "-e", f"{c}^{{commit}}"], cwd=ROOT).returncode == 0 for c in commits)


@pytest.mark.skipif(not _have("41cd29e", "7c0031d", "c0a2ba5"), reason="a shallow clone lacks the commits")
def test_runs_at_a_commit_with_the_same_harness_count_and_one_with_another_harness_is_refused(tmp_path):
    # 41cd29e and 7c0031d differ in docs, tests and scripts/baselines_table.py only (the sixteenth session's device
    # copy named 7c0031d while it ran 41cd29e's tree); by c0a2ba5 the baseline was chosen another way
    silu = _gpu_cases("silu_and_mul")
    first = _run(tmp_path / "a", "41cd29e48fa849ef807949529942c8e4884ad69a", [("silu_and_mul", silu[0])])
    second = _run(tmp_path / "b", "7c0031d411e8c1a4666bd26d02cf1388498dfd62", [("silu_and_mul", c) for c in silu[1:]])
    command = [sys.executable, "scripts/remaining_tasks.py", "--commit", "41cd29e", str(first), str(second)]
    refused = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and "git_commit 7c0031d411e8c1a4666bd26d02cf1388498dfd62 is not 41cd29e" in \
        refused.stderr
    counted = subprocess.run(command + ["--same-harness", "7c0031d"], cwd=ROOT, capture_output=True, text=True)
    assert counted.returncode == 0, counted.stderr
    assert "silu_and_mul" not in counted.stdout and f"1 of {len(Registry().names)} tasks done" in counted.stderr
    other = subprocess.run(command + ["--same-harness", "c0a2ba5"], cwd=ROOT, capture_output=True, text=True)
    assert other.returncode == 2 and "differs from 41cd29e in what makes rows: " in other.stderr
    assert "fastkernels/evaluate.py" in other.stderr


def test_with_harness_a_run_counts_by_the_content_digest_its_env_json_names_whatever_its_commit(tmp_path):
    silu = _gpu_cases("silu_and_mul")
    first = _run(tmp_path / "a", "1111111aaa", [("silu_and_mul", silu[0])])
    second = _run(tmp_path / "b", "2222222bbb", [("silu_and_mul", c) for c in silu[1:]])
    other = _run(tmp_path / "c", "1111111aaa", [])
    for run, digest in ((first, "ab12" * 16), (second, "ab12" * 16), (other, "cd34" * 16)):
        env = json.loads((run / "env.json").read_text())
        (run / "env.json").write_text(json.dumps({**env, "harness_sha256": digest}))
    command = [sys.executable, "scripts/remaining_tasks.py", "--harness", "ab12ab12"]
    counted = subprocess.run(command + [str(first), str(second)], cwd=ROOT, capture_output=True, text=True)
    assert counted.returncode == 0, counted.stderr
    assert "silu_and_mul" not in counted.stdout and "have rows at ab12ab12" in counted.stderr
    refused = subprocess.run(command + [str(first), str(other)], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and "harness_sha256 cd34cd34cd34cd34 is not ab12ab12" in refused.stderr
    neither = subprocess.run([sys.executable, "scripts/remaining_tasks.py", str(first)], cwd=ROOT,
                             capture_output=True, text=True)
    assert neither.returncode == 2 and "one of --commit or --harness" in neither.stderr


def test_lanes_files_give_each_gpu_of_a_call_one_group(tmp_path):
    groups = [["a", "b"], ["c"], ["d"]]
    written = remaining_tasks.write_lanes(groups, 2, tmp_path / ".lanes", {"a": 100.0, "c": 50.0})
    assert [path.name for path in written] == ["call-1.txt", "call-2.txt"]
    first = [line for line in written[0].read_text().splitlines() if not line.startswith("#")]
    assert first == ['0 noop FK_TASKS="tasks=all tasks.include=[a,b]"', '1 noop FK_TASKS="tasks=all tasks.include=[c]"']
    assert "~100 s of worker time" in written[0].read_text()
    second = [line for line in written[1].read_text().splitlines() if not line.startswith("#")]
    assert second == ['0 noop FK_TASKS="tasks=all tasks.include=[d]"']


def test_warm_lanes_share_gpu_0_and_leave_out_the_tasks_named(tmp_path):
    """What is left, warmed first in lanes side by side on GPU 0 (its cache is the one the calls' lane 0 times on);
    a task whose autotuning times the GPU tunes alone, in its timed run."""
    run = _run(tmp_path / "run", "abc123", [(task, case) for task in Registry().names if task != "moe_experts"
                                            and task != "rms_norm" and task != "softmax" for case in _gpu_cases(task)])
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "remaining_tasks.py"), str(run), "--commit", "abc123",
                           "--lanes-dir", str(tmp_path / ".lanes"), "--gpus", "1", "--warm-lanes", "2",
                           "--no-warm", "moe_experts"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    warm = [line for line in (tmp_path / ".lanes" / "warm.txt").read_text().splitlines() if not line.startswith("#")]
    assert sorted(warm) == ['0:w1 warm FK_TASKS="tasks=all tasks.include=[rms_norm]"',
                            '0:w2 warm FK_TASKS="tasks=all tasks.include=[softmax]"']
    calls = (tmp_path / ".lanes" / "call-1.txt").read_text()
    assert '0 noop FK_TASKS="tasks=all tasks.include=[' in calls and "moe_experts" in calls


def test_warm_lanes_need_a_lanes_directory(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "remaining_tasks.py"), "--commit", "abc123",
                           "--warm-lanes", "2"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--warm-lanes writes a lanes file: give --lanes-dir too" in done.stderr


def test_after_warm_lanes_a_task_is_expected_to_cost_its_time_less_its_compiles(tmp_path):
    """The warm lanes pay the first compiles, so the timed calls are split by what is left; a task the warm lanes
    leave out keeps its whole time."""
    old = _run(tmp_path / "old", "x", [], {"gla_chunk": 160.0, "moe_experts": 336.0, "softmax": 20.0})
    (old / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in [
        {"task": "gla_chunk", "case": "a", "compile_s": {"fla": 140.0, "candidate": 0.0}},
        {"task": "moe_experts", "case": "a", "compile_s": {"liger": 310.0}},
        {"task": "softmax", "case": "a", "compile_s": {"torch_compile": 12.0}}]))
    assert remaining_tasks.compile_seconds([old]) == {"gla_chunk": 140.0, "moe_experts": 310.0, "softmax": 12.0}
    run = _run(tmp_path / "run", "abc123", [(task, case) for task in Registry().names
                                            if task not in ("gla_chunk", "moe_experts", "softmax")
                                            for case in _gpu_cases(task)])
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "remaining_tasks.py"), str(run), "--commit", "abc123",
                           "--lanes-dir", str(tmp_path / ".lanes"), "--gpus", "1", "--calls", "1", "--warm-lanes", "1",
                           "--times-from", str(old), "--no-warm", "moe_experts"], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "3 tasks, ~364 s of worker time" in done.stdout  # 20 + 336 + 8: gla_chunk's 160 s less its 140 s compile


def test_runs_at_the_standing_harness_count_only_for_the_tasks_whose_rows_still_stand(tmp_path):
    silu, gelu = _gpu_cases("silu_and_mul"), _gpu_cases("gelu_and_mul")
    old = _run(tmp_path / "old", "1111111aaa",
               [("silu_and_mul", c) for c in silu] + [("gelu_and_mul", c) for c in gelu])
    new = _run(tmp_path / "new", "2222222bbb", [("gelu_and_mul", gelu[0])])
    for run, digest in ((old, "0ld0" * 16), (new, "ab12" * 16)):
        env = json.loads((run / "env.json").read_text())
        (run / "env.json").write_text(json.dumps({**env, "harness_sha256": digest}))
    standing = ("0ld0" * 16, frozenset({"gelu_and_mul"}))  # gelu_and_mul's own files changed in code since
    done = remaining_tasks.finished_cases([old, new], None, harness="ab12", standing=standing)
    assert {(t, c) for t, c in done if t == "silu_and_mul"} == {("silu_and_mul", c) for c in silu}
    assert {(t, c) for t, c in done if t == "gelu_and_mul"} == {("gelu_and_mul", gelu[0])}
    with pytest.raises(ValueError, match="0ld00ld00ld00ld0 is not ab12 or the --standing-from harness ffffffffffff"):
        remaining_tasks.finished_cases([old], None, harness="ab12", standing=("f" * 64, frozenset()))


def test_runs_at_the_standing_harness_must_be_noop_runs(tmp_path):
    """The standing rule leaves out agents/ files (noop rows run none of them), so another agent's rows at the old
    harness cannot be stitched in: their candidate files may have changed."""
    old = _run(tmp_path / "old", "1111111aaa", [("silu_and_mul", _gpu_cases("silu_and_mul")[0])], agent="reference")
    env = json.loads((old / "env.json").read_text())
    (old / "env.json").write_text(json.dumps({**env, "harness_sha256": "0ld0" * 16}))
    with pytest.raises(ValueError, match="rows of agent reference: --standing-from counts noop rows only"):
        remaining_tasks.finished_cases([old], None, harness="ab12", standing=("0ld0" * 16, frozenset()))


def test_standing_from_widens_harness_only():
    done = subprocess.run([sys.executable, "scripts/remaining_tasks.py", "--commit", "abc", "--standing-from", "HEAD"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "--standing-from widens --harness" in done.stderr


def test_a_level_narrows_what_is_left_to_that_levels_tasks(tmp_path):
    run = _run(tmp_path / "a", "abc1234def", [("silu_and_mul", c) for c in _gpu_cases("silu_and_mul")])
    done = subprocess.run([sys.executable, "scripts/remaining_tasks.py", "--commit", "abc1234", "--level", "1",
                           str(run)], cwd=ROOT, capture_output=True, text=True, check=True)
    level_1 = [name for name in Registry().names if Registry().get(name).level == 1]
    left = done.stdout.split("[", 1)[1].split("]", 1)[0].split(",")
    assert sorted(left) == sorted(set(level_1) - {"silu_and_mul"})
    assert f"1 of {len(level_1)} tasks done" in done.stderr

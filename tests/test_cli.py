"""`python -m fastkernels` end to end on the CPU, as a user runs it: artifacts, statuses, reproducibility."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = Path(__file__).parent / "candidates"


def fastkernels(run_dir: Path, *overrides: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "fastkernels", "hardware=cpu", f"hydra.run.dir={run_dir}",
               "harness.iterations=10", "harness.warmup=2", "harness.max_iterations=20", *overrides]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def noop_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("noop")
    result = fastkernels(run_dir, "tasks=smoke", "agent=noop")
    assert result.returncode == 0, result.stderr[-2000:]
    return run_dir


def test_noop_run_passes_every_row_and_writes_every_artifact(noop_run):
    results = rows(noop_run)
    assert results and all(row["status"] == "PASSED" for row in results)
    assert {row["task"] for row in results} == {"rms_norm", "silu_and_mul", "embedding"}
    assert all(row["timing"] == "host_clock" and row["speedup"] > 0 for row in results)
    # first calls beyond a steady call, per implementation: the production baselines checked and the candidate
    assert all({row["baseline_impl"], "candidate"} <= set(row["compile_s"]) and min(row["compile_s"].values()) >= 0
               for row in results)
    macroeval = json.loads((noop_run / "macroeval.json").read_text())
    assert macroeval["kernel_level"]["levels"][0]["correct"] == 3
    environment = json.loads((noop_run / "env.json").read_text())
    assert environment["device"]["kind"] == "cpu" and "git_commit" in environment and environment["wall_s"] > 0
    assert (noop_run / ".hydra" / "config.yaml").exists() and (noop_run / "cli.log").exists()


def test_same_seed_gives_the_same_verdicts_and_errors(noop_run, tmp_path):
    assert fastkernels(tmp_path, "tasks=smoke", "agent=noop").returncode == 0
    again = {(r["task"], r["case"]): (r["status"], r["candidate_error"]) for r in rows(tmp_path)}
    assert again == {(r["task"], r["case"]): (r["status"], r["candidate_error"]) for r in rows(noop_run)}


def test_reference_agent_runs_its_triton_kernels_under_the_interpreter(tmp_path):
    result = fastkernels(tmp_path, "tasks=smoke", "agent=reference")
    assert result.returncode == 0, result.stderr[-2000:]
    statuses = {(r["task"], r["status"]) for r in rows(tmp_path)}
    assert ("rms_norm", "PASSED") in statuses and ("silu_and_mul", "PASSED") in statuses
    assert ("rms_norm", "NOT_ATTEMPTED") not in statuses


def test_a_broken_local_candidate_set_gets_one_status_per_failure_and_the_run_completes(tmp_path):
    result = fastkernels(tmp_path, "agent=local", f"agent.path={CANDIDATES / 'mixed'}",
                         "tasks.include=[rms_norm,silu_and_mul,embedding]")
    assert result.returncode == 0, result.stderr[-2000:]
    by_task = {}
    for row in rows(tmp_path):
        by_task.setdefault(row["task"], set()).add(row["status"])
    assert by_task == {"rms_norm": {"INCORRECT"}, "silu_and_mul": {"COMPILE_ERROR"}, "embedding": {"RUNTIME_ERROR"}}
    assert (tmp_path / "macroeval.json").exists()


def test_bad_input_is_a_one_line_error_naming_the_key(tmp_path):
    result = fastkernels(tmp_path, "agent=kda")
    assert result.returncode == 2 and "agent.path" in result.stderr
    result = fastkernels(tmp_path, "tasks.include=[rms_nrom]")
    assert result.returncode == 2 and "did you mean rms_norm" in result.stderr
    result = fastkernels(tmp_path, "hardware=h200")
    assert result.returncode == 2 and "h200" in result.stderr


def test_tasks_cases_keeps_only_the_named_cases_and_a_task_left_without_one_drops_out(tmp_path):
    result = fastkernels(tmp_path, "agent=noop", "tasks.include=[rms_norm,silu_and_mul,embedding]",
                         "tasks.cases=[cpu_odd,cpu_residual_odd]")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted((r["task"], r["case"]) for r in rows(tmp_path)) == [
        ("embedding", "cpu_odd"), ("rms_norm", "cpu_residual_odd"), ("silu_and_mul", "cpu_odd")]


def test_a_case_name_no_selected_task_has_is_a_one_line_error_that_never_runs_nothing(tmp_path):
    result = fastkernels(tmp_path, "tasks.include=[rms_norm]", "tasks.cases=[cpu_smal]")
    assert result.returncode == 2 and "tasks.cases: no selected task has a cpu case 'cpu_smal'" in result.stderr
    assert "did you mean cpu_small" in result.stderr
    result = fastkernels(tmp_path, "tasks.include=[rms_norm]", "tasks.cases=[llama31_8b_decode_1]")
    assert result.returncode == 2 and "'llama31_8b_decode_1' is not a cpu case (rms_norm has it" in result.stderr


def test_multirun_writes_one_complete_run_directory_per_job(tmp_path):
    command = [sys.executable, "-m", "fastkernels", "-m", "hardware=cpu", "agent=noop,reference", "harness.seed=0,1",
               "tasks.include=[silu_and_mul]", "harness.iterations=5", "harness.warmup=1", "harness.max_iterations=10", f"hydra.sweep.dir={tmp_path}"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    runs = sorted(path.parent for path in tmp_path.glob("*/results.jsonl"))
    assert [run.name for run in runs] == ["0_cpu_noop", "1_cpu_noop", "2_cpu_reference", "3_cpu_reference"]
    assert [rows(run)[0]["seed"] for run in runs] == [0, 1, 0, 1]
    assert all((run / "macroeval.json").exists() and rows(run) for run in runs)


@pytest.mark.parametrize("agent, status", [("composed_honest", "PASSED"), ("composed_wrong", "INCORRECT")])
def test_composed_mode_swaps_an_l1_candidate_into_the_l2_task_built_from_it(agent, status, tmp_path):
    result = fastkernels(tmp_path, "agent=local", f"agent.path={CANDIDATES / agent}", "mode=composed",
                         "tasks.include=[silu_and_mul,llama_mlp]")
    assert result.returncode == 0, result.stderr[-2000:]
    by_task = {}
    for row in rows(tmp_path):
        by_task.setdefault(row["task"], set()).add(row["status"])
    assert by_task == {"silu_and_mul": {status}, "llama_mlp": {status}}


def test_independent_mode_leaves_the_l2_task_not_attempted(tmp_path):
    result = fastkernels(tmp_path, "agent=local", f"agent.path={CANDIDATES / 'composed_wrong'}",
                         "tasks.include=[llama_mlp]")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {row["status"] for row in rows(tmp_path)} == {"NOT_ATTEMPTED"}


def test_compiling_baselines_and_candidates_are_not_mistaken_for_patching(tmp_path):
    result = fastkernels(tmp_path, "agent=local", f"agent.path={CANDIDATES / 'compiled'}", "baseline=inductor",
                         "tasks.include=[silu_and_mul]")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {(row["status"], row["baseline_impl"]) for row in rows(tmp_path)} == {("PASSED", "inductor")}

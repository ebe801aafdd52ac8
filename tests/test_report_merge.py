"""`python -m fastkernels.report SWEEP_DIR`: a multirun's run directories merged into one leaderboard per hardware
profile (Markdown + JSON), refusing runs whose environments differ unless --allow-mixed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from fastkernels.records import ResultRow, Status
from fastkernels.report import environment_differences, main, merge_runs

ENVIRONMENT = {
    "profile": "h200",
    "device": {"kind": "cuda", "name": "NVIDIA H200", "compute_capability": [9, 0], "sm_count": 132,
               "driver_version": "580.159.04", "device_index": 0},
    "cuda_runtime": "12.8", "cudnn": 91002, "python": "3.12.3", "python_implementation": "CPython",
    "packages": {"torch": "2.10.0", "triton": "3.6.0", "liger-kernel": "0.8.5", "fastkernels": "0.1.0"},
    "lock_file": "requirements/gpu-cu128.lock", "lock_sha256": "ab" * 32, "lock_drift": {},
    "git_commit": "c0ffee" * 6 + "c0ff", "git_dirty": False, "matmul_allow_tf32": False, "cudnn_allow_tf32": True,
    "float32_matmul_precision": "highest", "deterministic_algorithms": False, "num_threads": 16,
    "hostname": "gpu-node-1", "wall_s": 12.5, "env": {"CUDA_VISIBLE_DEVICES": "0"},
}
TASKS = {"rms_norm": (1, ["normalization"]), "silu_and_mul": (1, ["activation"]), "llama_mlp": (2, ["mlp"])}


def row(task: str, case: str, agent: str, speedup: float | None, hardware: str = "h200", **extra) -> dict:
    level, categories = TASKS[task]
    base = dict(task=task, level=level, categories=categories, case=case, agent=agent, baseline="production",
                hardware=hardware, device="NVIDIA H200")
    if speedup is None:
        return ResultRow(**base, status=Status.INCORRECT, reason="max error 3.2 > tolerance").model_dump(mode="json")
    return ResultRow(**base, status=Status.PASSED, baseline_ms=1.0, candidate_ms=1.0 / speedup, speedup=speedup,
                     candidate_error={"max_abs": 0, "max_rel": 0, "worst_ratio": 0, "atol": 1e-2, "rtol": 1e-2},
                     **extra).model_dump(mode="json")


def make_run(path: Path, agent: str, speedups: dict[tuple[str, str], float | None], profile: str = "h200",
             environment: dict | None = None, seed: int = 0, tasks: str = "level1",
             reviews: dict[tuple[str, str], str] | None = None) -> Path:
    """A run directory as the pipeline leaves it: results.jsonl, env.json and .hydra/config.yaml."""
    (path / ".hydra").mkdir(parents=True)
    rows = [row(task, case, agent, speed, profile, **({"review": reviews[task, case]} if (task, case) in (reviews or {})
                                                        else {}))
            for (task, case), speed in speedups.items()]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = copy.deepcopy(environment or ENVIRONMENT)
    env["profile"] = profile
    (path / "env.json").write_text(json.dumps(env))
    config = {"hardware": {"name": "auto" if profile != "cpu" else "cpu"},
              "tasks": {"name": tasks, "levels": [1] if tasks == "level1" else [2]},
              "agent": {"name": agent, "kind": "x", "path": None if agent == "noop" else f"agents/{agent}"},
              "baseline": {"name": "production"}, "harness": {"seed": seed, "iterations": 50},
              "clocks": {"policy": "observe"}, "mode": "independent", "runner": {"name": "local"}}
    (path / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    return path


L1_NOOP = {("rms_norm", "prefill"): 1.0, ("rms_norm", "decode"): 1.0, ("silu_and_mul", "prefill"): 1.0}
L1_REFERENCE = {("rms_norm", "prefill"): 1.3, ("rms_norm", "decode"): 1.2, ("silu_and_mul", "prefill"): 2.5}


def test_a_sweep_merges_into_one_ranked_leaderboard_per_profile_with_a_json(tmp_path, capsys):
    sweep = tmp_path / "multirun"
    make_run(sweep / "0_h200_noop", "noop", L1_NOOP)
    make_run(sweep / "1_h200_reference", "reference", L1_REFERENCE)
    h100 = {**ENVIRONMENT, "device": {**ENVIRONMENT["device"], "name": "NVIDIA H100 80GB HBM3", "driver_version": "570"}}
    make_run(sweep / "2_h100_reference", "reference", {("rms_norm", "prefill"): None}, profile="h100", environment=h100)
    assert main([str(sweep)]) == 0
    printed = capsys.readouterr().out
    assert "## hardware=h100" in printed and "## hardware=h200: 2 run(s); device NVIDIA H200" in printed
    merged = json.loads((sweep / "leaderboard.json").read_text())
    assert (sweep / "leaderboard.md").read_text() == printed
    h200 = merged["profiles"]["h200"]["leaderboard"]
    assert [(r["rank"], r["agent"]) for r in h200] == [(1, "reference"), (2, "noop")]
    best = h200[0]
    assert best["correct"] == 2 and best["fast_1"] == 1.0 and best["fast_2"] == 0.5
    assert best["geomean_speedup"] == pytest.approx(((1.3 * 1.2) ** 0.5 * 2.5) ** 0.5)
    assert merged["profiles"]["h100"]["leaderboard"][0]["correct"] == 0
    assert merged["profiles"]["h200"]["environment"]["packages.torch"] == "2.10.0"


def test_runs_that_differ_only_in_their_task_selection_add_up_to_one_entry(tmp_path):
    make_run(tmp_path / "0_level1", "reference", L1_REFERENCE, tasks="level1")
    make_run(tmp_path / "1_level2", "reference", {("llama_mlp", "prefill"): 1.1}, tasks="level2")
    merged = merge_runs([tmp_path])["profiles"]["h200"]
    assert len(merged["entries"]) == 1 and merged["entries"][0]["runs"] == ["0_level1", "1_level2"]
    assert [(r["level"], r["tasks"]) for r in merged["leaderboard"]] == [(1, 2), (2, 1)]


def test_entries_that_differ_in_config_say_how(tmp_path):
    make_run(tmp_path / "0", "reference", L1_REFERENCE, seed=0)
    make_run(tmp_path / "1", "reference", {**L1_REFERENCE, ("silu_and_mul", "prefill"): 0.9}, seed=1)
    table = merge_runs([tmp_path])["profiles"]["h200"]["leaderboard"]
    assert [row["config"] for row in table] == [{"harness.seed": 0}, {"harness.seed": 1}]


def test_runs_with_different_environments_are_refused_unless_allowed(tmp_path, capsys):
    make_run(tmp_path / "0_noop", "noop", L1_NOOP)
    newer = {**ENVIRONMENT, "packages": {**ENVIRONMENT["packages"], "torch": "2.13.0"}, "git_commit": "feed" * 10}
    make_run(tmp_path / "1_reference", "reference", L1_REFERENCE, environment=newer)
    assert main([str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "packages.torch: 2.10.0 (0_noop) vs 2.13.0 (1_reference)" in error
    assert "git_commit" in error and "--allow-mixed" in error and not (tmp_path / "leaderboard.json").exists()
    assert main([str(tmp_path), "--allow-mixed"]) == 0
    merged = json.loads((tmp_path / "leaderboard.json").read_text())["profiles"]["h200"]
    assert merged["environment"] is None and any(line.startswith("packages.torch") for line in merged["mixed"])
    assert "Mixed environments" in (tmp_path / "leaderboard.md").read_text()


def test_runs_whose_code_differs_by_content_are_refused_even_under_one_commit(tmp_path, capsys):
    # a copied tree's git metadata can name a commit other than the code it ran (environment.harness_digest)
    make_run(tmp_path / "0_noop", "noop", L1_NOOP, environment={**ENVIRONMENT, "harness_sha256": "aa" * 32})
    make_run(tmp_path / "1_reference", "reference", L1_REFERENCE,
             environment={**ENVIRONMENT, "harness_sha256": "bb" * 32})
    assert main([str(tmp_path)]) == 2
    assert "harness_sha256" in capsys.readouterr().err


def test_host_names_clocks_and_wall_time_do_not_count_as_a_different_environment():
    other = {**ENVIRONMENT, "hostname": "gpu-node-2", "wall_s": 99.0, "env": {"CUDA_VISIBLE_DEVICES": "3"},
             "device": {**ENVIRONMENT["device"], "device_index": 3}, "clocks_after": {"sm_mhz": 1980}}
    assert environment_differences([{"name": "a", "environment": ENVIRONMENT},
                                    {"name": "b", "environment": other}]) == []


def test_the_same_task_case_twice_under_one_config_is_refused(tmp_path, capsys):
    make_run(tmp_path / "a", "reference", L1_REFERENCE)
    make_run(tmp_path / "b", "reference", L1_REFERENCE)
    assert main([str(tmp_path)]) == 2
    assert "runs a and b both score rms_norm/prefill" in capsys.readouterr().err


def test_run_directories_alone_still_print_per_row_tables_and_merge_on_request(tmp_path, capsys):
    one = make_run(tmp_path / "noop", "noop", L1_NOOP)
    two = make_run(tmp_path / "reference", "reference", L1_REFERENCE)
    assert main([str(one), str(two)]) == 0
    assert "| task | case | status |" in capsys.readouterr().out and not (tmp_path / "leaderboard.json").exists()
    assert main(["--merge", str(one), str(two), "--out", str(tmp_path / "lb")]) == 0
    assert json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["profiles"]["h200"]["runs"] == ["noop",
                                                                                                         "reference"]


def test_an_empty_directory_is_a_one_line_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "no run directories" in capsys.readouterr().err


def test_the_leaderboard_counts_the_rows_flagged_for_review(tmp_path):
    """A win over a fallback (production's kernel failed its check) or over 10x is counted beside the entry."""
    make_run(tmp_path / "0_reference", "reference", L1_REFERENCE,
             reviews={("silu_and_mul", "prefill"): "production implementation(s) liger failed the correctness check"})
    assert main([str(tmp_path)]) == 0
    table = json.loads((tmp_path / "leaderboard.json").read_text())["profiles"]["h200"]["leaderboard"]
    assert [(r["level"], r["review"]) for r in table] == [(1, 1)]
    assert "| fast_1 (95%) | review | runs |" in (tmp_path / "leaderboard.md").read_text()


def test_an_interrupted_run_is_refused_unless_partial_runs_are_allowed_and_then_it_is_named(tmp_path, capsys):
    make_run(tmp_path / "0_noop", "noop", L1_NOOP)
    make_run(tmp_path / "1_reference", "reference", {("rms_norm", "prefill"): 1.3},
             environment={**ENVIRONMENT, "interrupted": "SIGTERM"})
    assert main([str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "1_reference (SIGTERM, 1 rows)" in error and "--allow-partial" in error
    assert main([str(tmp_path), "--allow-partial"]) == 0
    assert "Interrupted runs (merged with --allow-partial" in (tmp_path / "leaderboard.md").read_text()
    assert json.loads((tmp_path / "leaderboard.json").read_text())["partial"] == ["1_reference (SIGTERM, 1 rows)"]


def test_the_table_of_an_interrupted_run_says_so(tmp_path, capsys):
    run = make_run(tmp_path / "r", "reference", {("rms_norm", "prefill"): 1.3},
                   environment={**ENVIRONMENT, "interrupted": "SIGINT"})
    assert main([str(run)]) == 0
    assert "**interrupted (SIGINT)**: only the rows it finished" in capsys.readouterr().out


def test_one_runs_table_shows_each_rows_speedups_and_the_candidates_compile_time(tmp_path):
    from fastkernels.report import results_table

    run = make_run(tmp_path / "run", "kda", {("rms_norm", "c0"): 1.25, ("silu_and_mul", "c0"): None})
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    rows[0].update(speedup_ci95=[1.2, 1.3], graph_speedup=1.1, compile_s={"liger": 0.4, "candidate": 2.5})
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = results_table(run).splitlines()
    assert lines[2].split(" | ")[7:] == ["graph speedup", "baseline % peak", "candidate % peak",
                                         "candidate compile s |"]
    assert lines[4].startswith("| rms_norm | c0 | PASSED |")
    assert "| 1.250 [1.200, 1.300] | 1.100 |" in lines[4] and lines[4].endswith("| 2.50 |")
    assert lines[5].startswith("| silu_and_mul | c0 | INCORRECT |") and lines[5].endswith("| — | — | — | — |")

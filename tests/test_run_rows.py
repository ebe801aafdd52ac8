"""Reading a run's rows back (artifacts.run_rows) whether it finished or was cut short, and comparing two runs of one
configuration (scripts/compare_runs.py: issue #5's check that sharding over GPUs changes nothing)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from fastkernels.artifacts import run_rows

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "compare_runs.py"


def _row(task: str, case: str, status: str = "PASSED", speedup: float = 1.0, ci=(0.99, 1.01)) -> dict:
    timed = status == "PASSED"
    return {"task": task, "case": case, "status": status, "speedup": speedup if timed else None,
            "candidate_ms": 1.0 if timed else None, "speedup_ci95": list(ci) if timed else None}


def _finished(run: Path, rows: list[dict]) -> Path:
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run


def _cut_short(run: Path, rows: list[dict]) -> Path:
    (run / "workers").mkdir(parents=True)
    for row in rows:
        with (run / "workers" / f"{row['task']}.rows.jsonl").open("a") as handle:
            handle.write(json.dumps(row) + "\n\n")
    return run


def _compare():
    spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_a_finished_run_is_read_from_results_and_a_cut_one_from_its_workers(tmp_path):
    rows = [_row("a", "c0"), _row("a", "c1"), _row("b", "c0", "INCORRECT")]
    assert run_rows(_finished(tmp_path / "done", rows)) == rows
    assert sorted(run_rows(_cut_short(tmp_path / "cut", rows)), key=lambda r: (r["task"], r["case"])) == rows


def test_two_agreeing_runs_compare_clean(tmp_path, capsys):
    one = _finished(tmp_path / "one", [_row("a", "c0", speedup=1.0), _row("b", "c0", speedup=2.0, ci=(1.9, 2.1))])
    two = _cut_short(tmp_path / "two", [_row("a", "c0", speedup=1.004), _row("b", "c0", speedup=1.98, ci=(1.9, 2.1))])
    assert _compare()([str(one), str(two)]) == 0
    out = capsys.readouterr().out
    # |1/1.004 - 1| = 0.0040 and |2/1.98 - 1| = 0.0101: median 0.0070, max 0.0101 (b)
    assert "median |s_a/s_b - 1| = 0.0070, max 0.0101 (b/c0); 0 with disjoint 95% intervals" in out


def test_a_status_that_differs_fails_the_comparison_and_names_the_case(tmp_path, capsys):
    one = _finished(tmp_path / "one", [_row("a", "c0"), _row("b", "c0", speedup=1.5, ci=(1.45, 1.55))])
    two = _finished(tmp_path / "two", [_row("a", "c0", "RUNTIME_ERROR"), _row("b", "c0", speedup=1.2, ci=(1.1, 1.3))])
    assert _compare()([str(one), str(two)]) == 1
    out = capsys.readouterr().out
    assert "status differs: a/c0: PASSED vs RUNTIME_ERROR" in out and "1 with disjoint 95% intervals" in out


def test_a_directory_that_is_not_a_run_is_a_one_line_error_naming_it(tmp_path, capsys):
    with pytest.raises(ValueError, match="no results.jsonl and no workers"):
        run_rows(tmp_path)
    with pytest.raises(SystemExit):
        _compare()([str(tmp_path), str(tmp_path)])
    assert f"{tmp_path}: no results.jsonl" in capsys.readouterr().err

"""scripts/compare_tuning.py: two passes' Inductor baselines, case by case, grouped by whether each side's
configuration was tuned afresh (coordinate descent in its worker log's Inductor note) or came from restored picks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import compare_tuning  # noqa: E402

MA = "torch_compile_max_autotune"


def run(tmp_path: Path, name: str, rows: list[tuple[str, float, str]]) -> Path:
    """A run directory: per case (case, max-autotune ms, that implementation's Inductor events), conv2d rows."""
    directory = tmp_path / name
    (directory / "workers").mkdir(parents=True)
    (directory / "results.jsonl").write_text("".join(
        json.dumps({"task": "conv2d", "case": case, "baseline_alternatives": {MA: ms, "cudnn": 0.2}}) + "\n"
        for case, ms, _ in rows))
    (directory / "workers" / "conv2d.log").write_text("".join(
        f"[    9.0 s] conv2d/{case}: 2 baseline(s) checked (Inductor: {MA}: {events}; torch_compile: "
        f"fxgraph_cache_miss +1)\n" for case, _, events in rows))
    return directory


def test_ratios_are_grouped_by_how_each_side_got_its_configuration(tmp_path):
    fresh, restored = "benchmark_gpu +80, coordesc_tuning_bench +40", "benchmark_gpu +2, fxgraph_cache_miss +1"
    old = run(tmp_path, "old", [("a", 0.128, fresh), ("b", 0.100, restored)])
    new = run(tmp_path, "new", [("a", 0.139, restored), ("b", 0.101, restored)])
    groups = compare_tuning.compare(compare_tuning.side([old]), compare_tuning.side([new]))
    assert set(groups) == {f"{MA}: fresh -> restored", f"{MA}: restored -> restored"}
    (ratio, task, case, impl), = groups[f"{MA}: fresh -> restored"]
    assert (task, case, impl) == ("conv2d", "a", MA) and ratio == pytest.approx(0.139 / 0.128)
    assert groups[f"{MA}: restored -> restored"][0][0] == pytest.approx(1.01)


def test_a_row_s_compile_events_say_it_where_rows_have_them(tmp_path):
    newer = run(tmp_path, "newer", [("a", 0.139, "coordesc_tuning_bench +40")])  # the log says fresh
    rows = newer / "results.jsonl"
    row = json.loads(rows.read_text())
    rows.write_text(json.dumps({**row, "compile_events": {MA: {"fxgraph_cache_hit": 1}}}) + "\n")  # the row: restored
    assert compare_tuning.side([newer])[("conv2d", "a", MA)] == (0.139, False)


def test_a_case_in_two_runs_of_one_side_counts_from_the_first_listed(tmp_path):
    newest = run(tmp_path, "newest", [("a", 0.2, "")])
    older = run(tmp_path, "older", [("a", 0.4, "coordesc_tuning_bench +3")])
    assert compare_tuning.side([newest, older])[("conv2d", "a", MA)] == (0.2, False)


def test_the_command_line_prints_each_group_and_refuses_passes_with_nothing_in_common(tmp_path, capsys, monkeypatch):
    old = run(tmp_path, "old", [("a", 0.128, "coordesc_tuning_bench +40")])
    new = run(tmp_path, "new", [("a", 0.139, "")])
    monkeypatch.setattr(sys, "argv", ["compare_tuning.py", "--old", str(old), "--new", str(new)])
    assert compare_tuning.main() == 0
    assert f"{MA}: fresh -> restored: 1 implementation-cases, NEW / OLD median 1.086" in capsys.readouterr().out
    other = run(tmp_path, "other", [("z", 0.1, "")])
    monkeypatch.setattr(sys, "argv", ["compare_tuning.py", "--old", str(old), "--new", str(other)])
    with pytest.raises(SystemExit, match="1"):
        compare_tuning.main()
    assert "no Inductor implementation was timed in both passes" in capsys.readouterr().err

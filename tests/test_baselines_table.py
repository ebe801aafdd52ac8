"""scripts/baselines_table.py: docs/baselines.md's table from run directories. The first run listed that has a case
gives its production row; the eager time comes from the first run that timed the eager module for that case, else
from an earlier table (--eager-from), marked †."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "baselines_table.py"


def _run_dir(root: Path, rows: list[dict]) -> Path:
    root.mkdir(parents=True)
    (root / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def _row(case: str, impl: str, baseline_ms: float, eager_ms: float | None = None,
         graph_ms: float | None = None) -> dict:
    alternatives = {"eager": eager_ms} if eager_ms is not None else {}
    # 4.1538 MB at 4153.8 GB/s is a 1 µs limit
    return {"task": "t", "case": case, "level": 1, "status": "PASSED", "baseline_ms": baseline_ms,
            "baseline_impl": impl, "baseline_alternatives": alternatives, "bytes": 4_153_800 * 40, "flops": 0,
            "baseline_graph_ms": graph_ms}


def test_newest_run_gives_the_production_row_an_older_run_the_eager_time_and_graph_times_their_own_column(tmp_path):
    newest = _run_dir(tmp_path / "new", [_row("c0", "torch_compile", 0.050),
                                         _row("c1", "torch_compile", 0.080, graph_ms=0.040)])
    older = _run_dir(tmp_path / "old", [_row("c0", "torch_native", 0.100, eager_ms=0.400), _row("c2", "native", 0.040)])
    out = subprocess.run([sys.executable, str(SCRIPT), "--copy-gbs", "4153.8", "--gemm-tflops", "771.6",
                          str(newest), str(older)], capture_output=True, text=True, check=True).stdout
    lines = {line.split(" | ")[1]: line for line in out.splitlines() if line.startswith("| t |")}
    assert lines["c0"] == "| t | c0 | torch_compile | 50.0 | 400.0 | 40.0 | 80% | - | - |  |"
    assert lines["c1"].startswith("| t | c1 | torch_compile | 80.0 | - | 40.0 | 50% | 40.0 | 100% |")
    assert lines["c2"].startswith("| t | c2 | native | 40.0 | - | 40.0 | 100% | - | - |")
    assert "3 cases of 1 tasks; median fraction of the limit 80%; 0 weak (< 50%)" in out
    assert "eager module / production baseline time: median 8.0x over 1 cases" in out
    assert "no eager time for 2 cases (a run with harness.time_eager=true fills them): t (2)" in out
    assert "CUDA-graph replay: median fraction of the limit 100% over the 1 cases timed that way" in out


def _earlier_table(path: Path, *eager_us: tuple[str, float]) -> Path:
    """An earlier docs/baselines.md table of task `t`, with these (case, eager µs) rows."""
    header = ("| task | case | production (impl) | µs | eager µs | limit µs | % of limit | graph µs |"
              " % of limit (graph) | weak: why |\n"
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
    rows = "".join(f"| t | {case} | torch_cudnn | 100.0 | {us} | 40.0 | 40% | - | - | why |\n" for case, us in eager_us)
    path.write_text(header + rows)
    return path


def test_an_earlier_tables_eager_times_fill_the_cases_no_run_timed_marked_as_carried(tmp_path):
    newest = _run_dir(tmp_path / "new", [_row("c0", "cudnn_channels_last", 0.050),
                                         _row("c1", "torch_compile", 0.080, eager_ms=0.300)])
    earlier = _earlier_table(tmp_path / "baselines.md", ("c0", 400.0), ("c1", 999.0))
    out = subprocess.run([sys.executable, str(SCRIPT), "--copy-gbs", "4153.8", "--gemm-tflops", "771.6",
                          "--eager-from", str(earlier), str(newest)], capture_output=True, text=True, check=True).stdout
    lines = {line.split(" | ")[1]: line for line in out.splitlines() if line.startswith("| t |")}
    assert lines["c0"].startswith("| t | c0 | cudnn_channels_last | 50.0 | 400.0† | 40.0 | 80% |")
    assert lines["c1"].startswith("| t | c1 | torch_compile | 80.0 | 300.0 | ")  # a run's own eager time wins
    assert f"† eager time carried from {earlier} (an earlier measurement)" in out


def test_a_launch_floor_raises_only_the_limits_below_it_in_a_summary_line_and_the_table_keeps_the_issues_limit(tmp_path):
    tiny = _row("c0", "native", 0.008) | {"bytes": 4_153_800 * 2}  # a 2 µs limit, timed at 8 µs: 25%
    big = _row("c1", "native", 0.050)  # 40 µs limit at 50 µs: 80%
    run = _run_dir(tmp_path / "run", [tiny, big])
    out = subprocess.run([sys.executable, str(SCRIPT), "--copy-gbs", "4153.8", "--gemm-tflops", "771.6",
                          "--launch-floor-us", "4", str(run)], capture_output=True, text=True, check=True).stdout
    assert "| t | c0 | native | 8.0 | - | 2.0 | 25% |" in out
    assert "2 cases of 1 tasks; median fraction of the limit 52%; 1 weak (< 50%)" in out
    # with the floor c0's limit is 4 µs: 50%; c1 keeps 80%
    assert "with a kernel's launch floor (4 µs) under every limit: median fraction 65%; 0 under 50%" in out


def test_the_carried_footnote_names_the_earlier_table_as_labelled(tmp_path):
    # OLD is usually a saved copy of docs/baselines.md (the table is regenerated into that file): the footnote then
    # names where the copy came from, not a temporary path.
    newest = _run_dir(tmp_path / "new", [_row("c0", "cudnn_channels_last", 0.050)])
    earlier = _earlier_table(tmp_path / "old.md", ("c0", 400.0))
    out = subprocess.run([sys.executable, str(SCRIPT), "--copy-gbs", "4153.8", "--gemm-tflops", "771.6",
                          "--eager-from", str(earlier), "--eager-from-label", "`git show 1cfddbb:docs/baselines.md`",
                          str(newest)], capture_output=True, text=True, check=True).stdout
    assert "† eager time carried from `git show 1cfddbb:docs/baselines.md` (an earlier measurement)" in out
    assert str(earlier) not in out

"""scripts/compare_phases.py: per phase, how much longer a later pass's cases took than the same cases before, so a
change's cost (in the phases it touches) is told from a slower host (every phase longer)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "compare_phases.py"


def write_log(run: Path, task: str, lines: list[tuple[float, str]]) -> None:
    (run / "workers").mkdir(parents=True, exist_ok=True)
    (run / "workers" / f"{task}.log").write_text("".join(f"[{stamp:8.2f} s] {text}\n" for stamp, text in lines))


def compare(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--a", str(tmp_path / "a"), "--b", str(tmp_path / "b"),
                           "--min-cases", "1", *extra], capture_output=True, text=True)


def test_each_phase_gets_the_median_ratio_of_its_cases_seconds_and_both_sums(tmp_path):
    for run, weights, timed in (("a", (1.0, 2.0), (3.0, 4.0)), ("b", (1.5, 3.0), (3.0, 4.0))):
        write_log(tmp_path / run, "t", [
            (0.5, "torch imported (16 CPU threads)"),  # not a case's line: no phase of its own
            (0.5 + weights[0], "t/c0: weights built"),
            (0.5 + weights[0] + timed[0], "t/c0: timed (50 pairs, 0.10 s of it judging rechecks, launch pad 800 us)"),
            (10.0, "case c0 PASSED"),
            (10.0 + weights[1], "t/c1: weights built"),
            (10.0 + weights[1] + timed[1], "t/c1: timed (50 pairs, 0.20 s of it judging rechecks)"),
        ])
    out = compare(tmp_path).stdout
    # weights built: 1.5x on both cases; timed: unchanged (its notes left out of the phase's name)
    assert "weights built: 2 cases, B/A median 1.50 (quartiles 1.50-1.50); A 3 s, B 4 s" in out
    assert "timed: 2 cases, B/A median 1.00 (quartiles 1.00-1.00); A 7 s, B 7 s" in out


def test_a_case_only_one_pass_has_is_left_out(tmp_path):
    write_log(tmp_path / "a", "t", [(0.0, "torch imported"), (1.0, "t/c0: weights built")])
    write_log(tmp_path / "b", "t", [(0.0, "torch imported"), (2.0, "t/c1: weights built")])
    assert compare(tmp_path).stdout.strip() == "no phase in both sets of runs"


def test_a_directory_without_worker_logs_is_named_in_one_line(tmp_path):
    (tmp_path / "a").mkdir()
    write_log(tmp_path / "b", "t", [(0.0, "torch imported")])
    result = compare(tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"compare_phases.py: {tmp_path / 'a'} has no workers/ directory (a run directory" \
                                    " holds workers/*.log)"

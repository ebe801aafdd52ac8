"""scripts/noop_variants.py: noop passes under several settings, side by side, with a summary per setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from noop_runs import noop_run

ROOT = Path(__file__).resolve().parent.parent


def _variants(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "noop_variants.py"), *arguments],
                          capture_output=True, text=True)


def test_each_setting_lists_its_runs_per_case_and_sums_up_its_rows(tmp_path):
    plain = [str(noop_run(tmp_path / f"plain{n}", {"placed": 0.976, "quiet": 1.001})) for n in (1, 2)]
    rotated = [str(noop_run(tmp_path / "rotated", {"placed": 0.9985, "quiet": 1.0125}))]
    done = _variants("--variant", "plain", *plain, "--variant", "instances=4", *rotated)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["case", "plain", "|", "instances=4"]
    assert lines[1].split() == ["t/placed", "0.9760", "0.9760", "|", "0.9985"]  # the failed row is not a case
    assert lines[2].split() == ["t/quiet", "1.0010", "1.0010", "|", "1.0125"]
    assert lines[3] == "plain: 4 rows; median |1-s| 0.0125, max 0.0240; 2 over 1%, 2 over 2%"
    assert lines[4] == "instances=4: 2 rows; median |1-s| 0.0070, max 0.0125; 1 over 1%, 0 over 2%"


def test_a_case_missing_from_one_run_shows_a_dash_and_graphs_read_the_replays(tmp_path):
    first = str(noop_run(tmp_path / "a", {"x": 1.0, "y": 1.0}))
    second = str(noop_run(tmp_path / "b", {"x": 1.0}))
    done = _variants("--variant", "plain", first, second, "--graphs")
    assert done.stdout.splitlines()[2].split() == ["t/y", "1.0000", "-"]
    assert "plain: 3 rows; median |1-s| 0.0000, max 0.0000; 0 over 1%, 0 over 2%" in done.stdout


def test_a_setting_without_runs_or_with_a_missing_run_is_one_clear_error(tmp_path):
    done = _variants("--variant", "plain")
    assert done.returncode == 2 and done.stderr.strip() == "noop_variants.py: --variant plain names no run directories"
    missing = _variants("--variant", "spacers", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and missing.stderr.startswith("noop_variants.py: --variant spacers: ")

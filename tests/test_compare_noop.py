"""scripts/compare_noop.py: a noop deviation that repeats across passes is the case's, not noise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from noop_runs import noop_run

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import compare_noop  # noqa: E402


def test_cases_off_in_either_pass_are_listed_with_whether_they_kept_their_side(tmp_path):
    a = noop_run(tmp_path / "a", {"steady": 1.001, "placed": 0.989, "noisy": 1.012, "quiet": 0.999})
    b = noop_run(tmp_path / "b", {"steady": 0.999, "placed": 0.988, "noisy": 0.995, "quiet": 1.002, "new": 1.05})
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_noop.py"), "--a", str(a), "--b", str(b),
                           "--over", "0.01"], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("4 cases in both; correlation of log speedups ")  # "new" and the failed row left out
    # each split with its two-sided binomial p: 2 of 4 is as even as can be, 3 of 4 happens 10 times in 16
    assert lines[1] == "below 1 on those cases: a 2/4 (50%); geometric mean 1.0002 (binomial p 1), b 3/4 (75%);" \
                       " geometric mean 0.9960 (binomial p 0.62)"
    assert lines[2] == "2 further than 1.0% from 1 in either; 1 of them on the same side in both"
    assert lines[3:] == ["  t/noisy: 1.0120 0.9950 (opposite)", "  t/placed: 0.9890 0.9880 (same side)"]


def test_graph_replays_compare_the_same_way(tmp_path):
    a = noop_run(tmp_path / "a", {"x": 1.0, "y": 1.0, "z": 1.0})
    b = noop_run(tmp_path / "b", {"x": 1.0, "y": 1.0, "z": 1.0})
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_noop.py"), "--a", str(a), "--b", str(b),
                           "--graphs"], capture_output=True, text=True, check=True)
    assert "3 cases in both; correlation of log speedups nan" in done.stdout  # no spread: no correlation to speak of
    assert "0 further than 0.5% from 1 in either" in done.stdout


def test_the_binomial_p_is_two_sided_and_exact():
    # 10 of 16 equally likely 4-row splits put 3 or more rows on one side; a 59/41 split of the H200 pass's 337 rows
    # would come of fair coins about once in 650 passes
    assert compare_noop.binomial_p(3, 4) == compare_noop.binomial_p(1, 4) == 10 / 16
    assert compare_noop.binomial_p(2, 4) == 1.0
    assert 0.0015 < compare_noop.binomial_p(198, 337) < 0.0016

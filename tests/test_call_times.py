"""harness.keep_call_times puts every timed call of a row in it (`call_times`): both implementations' times in call
order, which one ran first in each iteration and which candidate outputs were rechecked; the row's speedup is the
interquartile mean of the log ratios of those very times (timing.paired_speedup). Off by default (rows stay small)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from fastkernels.records import CallTimes
from scoring import score


def test_a_row_keeps_every_timed_call_and_its_speedup_is_computed_from_them(tmp_path):
    rows = score(None, tmp_path, "silu_and_mul", "harness.keep_call_times=true", "harness.rechecks=3")
    for row in rows:
        times = row.call_times
        assert times is not None and len(times.baseline_ms) == len(times.candidate_ms) == len(times.first)
        assert len(times.baseline_ms) == row.samples and len(times.baseline_ms) % 2 == 0  # iterations in pairs
        logs = np.sort(np.log(np.array(times.baseline_ms) / times.candidate_ms))
        quarter = -(-len(logs) // 4)
        assert row.speedup == pytest.approx(float(np.exp(logs[quarter:len(logs) - quarter].mean())))
        assert row.baseline_ms == pytest.approx(float(np.median(times.baseline_ms)))
        # each pair of iterations runs an order and then its reverse
        assert all(a != b for a, b in zip(times.first[0::2], times.first[1::2]))
        assert times.input_sets >= 1
        batches = 1 + (len(times.baseline_ms) > 8)  # scoring.py's 8 iterations, then adaptive batches
        assert 3 * batches <= len(times.rechecked) == len(set(times.rechecked))


def test_rows_leave_call_times_out_unless_asked(tmp_path):
    assert all(row.call_times is None for row in score(None, tmp_path, "silu_and_mul"))


def test_call_times_need_one_entry_per_iteration_and_rechecks_inside_them():
    CallTimes(baseline_ms=[1.0, 1.1], candidate_ms=[], first=["baseline", "baseline"], rechecked=[],
              input_sets=2)
    with pytest.raises(ValidationError, match="one entry per iteration"):
        CallTimes(baseline_ms=[1.0, 1.1], candidate_ms=[1.0], first=["baseline", "candidate"], rechecked=[],
                  input_sets=2)
    with pytest.raises(ValidationError, match="not timed"):
        CallTimes(baseline_ms=[1.0, 1.1], candidate_ms=[1.0, 1.0], first=["baseline", "candidate"], rechecked=[2],
                  input_sets=2)


def test_the_call_times_script_splits_a_rows_calls_and_compares_estimators(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    run = tmp_path / "run"
    run.mkdir()
    # the baseline's calls are slow (12 us) whenever it runs first: a systematic order effect the split must name
    first = ["baseline", "candidate"] * 8
    baseline = [0.012 if who == "baseline" else 0.010 for who in first]
    row = {"task": "t", "case": "c", "status": "PASSED", "speedup": 1.1, "baseline_impl": "native",
           "call_times": {"baseline_ms": baseline, "candidate_ms": [0.010] * 16, "first": first,
                          "rechecked": [3], "input_sets": 4}}
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    script = Path(__file__).resolve().parent.parent / "scripts" / "call_times.py"
    out = subprocess.run([sys.executable, str(script), str(run), "t/c"], capture_output=True, text=True,
                         check=True).stdout
    assert "t/c [native] speedup 1.1000: 16 iterations, baseline median 11.00 us, candidate 10.00 us" in out
    assert "ratio of medians                   1.1000" in out
    assert "baseline ran first     (  8 of 16): baseline 12.00 us (else 10.00), candidate 10.00 us (else 10.00)" in out
    assert "median ratio there 1.2000" in out
    quiet = subprocess.run([sys.executable, str(script), str(run), "--over", "0.2"], capture_output=True, text=True,
                           check=True).stdout
    assert quiet.strip() == "1 row(s) kept their calls; none has a speedup further than 0.2 from 1"
    # --graphs reads the graph replays' kept times and graph speedup instead (the same split, over captures)
    row.update(graph_speedup=0.9, graph_call_times={**row["call_times"], "baseline_ms": [0.009] * 16})
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    graphs = subprocess.run([sys.executable, str(script), str(run), "t/c", "--graphs"], capture_output=True,
                            text=True, check=True).stdout
    assert "t/c [native] speedup 0.9000: 16 iterations, baseline median 9.00 us, candidate 10.00 us" in graphs


def test_the_estimators_mode_measures_each_estimators_distance_from_one_over_noop_rows(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    runs = []
    for index, candidate in enumerate(([0.010] * 8, [0.011] * 8)):  # 1.0, and a row 10% slower on every call
        run = tmp_path / f"run{index}"
        run.mkdir()
        row = {"task": "t", "case": f"c{index}", "status": "PASSED", "speedup": 1.0,
               "call_times": {"baseline_ms": [0.010] * 8, "candidate_ms": candidate, "first": ["baseline"] * 8,
                              "rechecked": [], "input_sets": 1}}
        (run / "results.jsonl").write_text(json.dumps(row) + "\n")
        runs.append(str(run))
    script = Path(__file__).resolve().parent.parent / "scripts" / "call_times.py"
    out = subprocess.run([sys.executable, str(script), *runs, "--estimators"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "2 noop rows; |1 - s| by estimator (the harness reports the first):"
    assert out[1].split()[:5] == ["interquartile", "mean", "of", "log", "ratios"]
    mean_of_logs = next(line for line in out if line.strip().startswith("mean of log ratios"))
    assert "median 4.55%, max 9.09% (t/c1), 1 over 2%, 1 over 1%" in mean_of_logs  # 1 / 1.1 = 0.9091
    assert ["iterations", "resampled", "1", "of", "2", "(50.0%)"] in [line.split() for line in out]  # not c1's
    assert ["input", "sets,", "then", "iterations,", "resampled", "1", "of", "2", "(50.0%)"] in [
        line.split() for line in out]

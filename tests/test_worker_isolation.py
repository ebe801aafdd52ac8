"""Each task runs in its own worker process: a candidate that raises, hangs, segfaults, computes the wrong thing,
does not import or has the wrong signature gets its own status, and the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastkernels.records import Status
from fastkernels.runner import run_task
from scoring import cpu_job
from scoring import score as score_dir

CANDIDATES = Path(__file__).parent / "candidates"


def score(name: str, tmp_path: Path, timeout_s: float = 120):
    return score_dir(CANDIDATES / name, tmp_path, "rms_norm", f"harness.timeout_s={timeout_s}")


@pytest.mark.parametrize(
    "name, status, words",
    [
        ("crash", Status.RUNTIME_ERROR, "kernel launch failed"),
        ("segfault", Status.RUNTIME_ERROR, "SIGSEGV"),
        ("wrong", Status.INCORRECT, "elements outside"),
        ("noimport", Status.COMPILE_ERROR, "fastkernels_no_such_extension"),
        ("badsig", Status.RUNTIME_ERROR, "interface mismatch"),
    ],
)
def test_a_broken_candidate_gets_its_own_status_on_every_case(name, status, words, tmp_path):
    rows = score(name, tmp_path)
    assert all(row.status is status and words in row.reason for row in rows), [r.reason for r in rows]
    assert all(row.speedup is None for row in rows)


def test_a_hanging_candidate_is_killed_at_the_timeout(tmp_path):
    rows = score("hang", tmp_path, timeout_s=15)
    assert all(row.status is Status.TIMEOUT and "15 s" in row.reason for row in rows)


def test_a_missing_candidate_is_not_attempted_and_stands_in_at_one(tmp_path):
    rows = score("no_such_agent", tmp_path)
    assert all(row.status is Status.NOT_ATTEMPTED and row.speedup == 1.0 and row.baseline_ms > 0 for row in rows)


def test_the_noop_agent_passes_at_speedup_one_within_noise(tmp_path):
    job, manifest = cpu_job(None, tmp_path)
    rows = run_task(job, manifest, tmp_path, lambda row: None)
    assert all(row.status is Status.PASSED and row.candidate_error.worst_ratio <= 1 for row in rows)
    assert all(0.5 < row.speedup < 2.0 for row in rows)  # host-clock noise on a shared CPU; the GPU bound is tighter

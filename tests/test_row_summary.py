"""scripts/row_summary.py: what a device step prints about rows it may then discard."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("row_summary", ROOT / "scripts" / "row_summary.py")
row_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(row_summary)


def test_counts_statuses_names_every_failure_and_groups_review_notes():
    rows = [{"task": "rms_norm", "case": "a", "status": "PASSED", "review": ""},
            {"task": "rms_norm", "case": "b", "status": "PASSED", "review": "warden: GPU contexts ... 123"},
            {"task": "rope", "case": "a", "status": "PASSED", "review": "warden: GPU contexts ... 123"},
            {"task": "rope", "case": "b", "status": "REWARD_HACK", "reason": "the warden killed\n a stray", "review": ""}]
    lines = row_summary.summarise(rows)
    assert lines[0] == "4 rows: PASSED 3, REWARD_HACK 1"
    assert "  REWARD_HACK rope/b: the warden killed a stray" in lines
    assert "2 rows carry a review note:" in lines
    assert "  2x warden: GPU contexts ... 123" in lines


def test_a_directory_without_rows_is_named_not_fatal(tmp_path, capsys):
    assert row_summary.main([str(tmp_path)]) == 0
    assert "not a run directory" in capsys.readouterr().out

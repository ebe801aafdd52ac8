"""Summarise run directories' rows for a device session's log: status counts, every failed row with its reason, and
the review notes (grouped), so a step whose rows are discarded (warm) still shows what the harness decided.

Usage: python scripts/row_summary.py RUN_DIR [RUN_DIR ...]
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fastkernels.artifacts import run_rows  # noqa: E402


def summarise(rows: list[dict]) -> list[str]:
    statuses = Counter(row["status"] for row in rows)
    lines = [f"{len(rows)} rows: " + ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))]
    for row in rows:
        if row["status"] != "PASSED":
            reason = " ".join(str(row.get("reason", "")).split())[:300]
            lines.append(f"  {row['status']} {row['task']}/{row['case']}: {reason}")
    notes = Counter(" ".join(row["review"].split())[:300] for row in rows if row.get("review"))
    if notes:
        lines.append(f"{sum(notes.values())} rows carry a review note:")
        lines += [f"  {count}x {note}" for note, count in notes.most_common()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for run in args.runs:
        try:
            rows = run_rows(run)
        except ValueError as error:
            print(error)
            continue
        print(f"== {run}")
        print("\n".join(summarise(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

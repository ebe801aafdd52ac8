"""Do two runs of the same configuration agree? Issue #5's check that sharding tasks over GPUs changes nothing.

For every (task, case) in both runs: the same status, and speedups whose difference is within the measurement
noise — reported as the median and max |s_a / s_b - 1| and the count of cases whose 95% intervals do not overlap.
Rows are read from results.jsonl, or from workers/*.rows.jsonl of a run cut short.

Usage: python scripts/compare_runs.py RUN_A RUN_B
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from fastkernels.artifacts import run_rows


def keyed_rows(run: Path) -> dict[tuple[str, str], dict]:
    return {(row["task"], row["case"]): row for row in run_rows(run)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    args = parser.parse_args(argv)
    try:
        a, b = keyed_rows(args.run_a), keyed_rows(args.run_b)
    except ValueError as error:
        parser.error(str(error))
    common = sorted(set(a) & set(b))
    print(f"{len(a)} rows in {args.run_a}, {len(b)} in {args.run_b}, {len(common)} in both")
    status_differs = [key for key in common if a[key]["status"] != b[key]["status"]]
    for key in status_differs:
        print(f"  status differs: {key[0]}/{key[1]}: {a[key]['status']} vs {b[key]['status']}")
    ratios, disjoint = [], []
    for key in common:
        sa, sb = a[key].get("speedup"), b[key].get("speedup")
        if sa is None or sb is None or a[key].get("candidate_ms") is None or b[key].get("candidate_ms") is None:
            continue
        ratios.append((abs(sa / sb - 1), key))
        ia, ib = a[key].get("speedup_ci95"), b[key].get("speedup_ci95")
        if ia and ib and (ia[1] < ib[0] or ib[1] < ia[0]):
            disjoint.append(key)
    if ratios:
        worst = max(ratios)
        median = statistics.median(r for r, _ in ratios)
        print(f"speedups of {len(ratios)} timed cases: median |s_a/s_b - 1| = {median:.4f},"
              f" max {worst[0]:.4f} ({worst[1][0]}/{worst[1][1]}); {len(disjoint)} with disjoint 95% intervals")
    return 1 if status_differs else 0


if __name__ == "__main__":
    sys.exit(main())

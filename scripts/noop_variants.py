"""Noop passes under several harness settings side by side: which setting keeps noop rows closest to 1.

Each `--variant NAME RUN [RUN ...]` names a setting (say `instances=4`) and its noop run directories, each run one
repeat of the same tasks. For every (task, case) the table lists each variant's speedups, one per run in the order
given; below it, per variant, over all its PASSED rows (every run's row counts): the median and max |1 - s| and how
many rows sit further than 1% and 2% from 1. A bias that repeats run after run under one setting and vanishes under
another is that setting's doing, not noise. On the H200 (2026-12-02, five tasks, 22 cases, four runs as they are, two
with `harness.instances=4`, four with `harness.placement_spacer_mb=64`) this is how four instances a side were shown
to cut the max from 2.34% to 1.05% (docs/measurement.md).

Usage: python scripts/noop_variants.py --variant plain RUN RUN --variant instances=4 RUN RUN [--graphs]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fastkernels.artifacts import run_rows  # noqa: E402

Key = tuple[str, str]


def run_speedups(run: Path, field: str) -> dict[Key, float]:
    """(task, case) -> `field` of every PASSED row of one run that has it."""
    return {(row["task"], row["case"]): float(row[field]) for row in run_rows(run)
            if row.get("status") == "PASSED" and row.get(field)}


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: no PASSED rows"
    gaps = [abs(1 - value) for value in values]
    return (f"{name}: {len(gaps)} rows; median |1-s| {statistics.median(gaps):.4f}, max {max(gaps):.4f}; "
            f"{sum(gap > 0.01 for gap in gaps)} over 1%, {sum(gap > 0.02 for gap in gaps)} over 2%")


def table(variants: dict[str, list[dict[Key, float]]]) -> list[str]:
    keys = sorted({key for runs in variants.values() for run in runs for key in run})
    width = max((len(f"{task}/{case}") for task, case in keys), default=10)
    lines = [f"{'case':{width}}  " + "  |  ".join(variants)]
    for key in keys:
        cells = [" ".join(f"{run[key]:.4f}" if key in run else "   -  " for run in runs) for runs in variants.values()]
        lines.append(f"{key[0] + '/' + key[1]:{width}}  " + "  |  ".join(cells))
    lines += [summary(name, [value for run in runs for value in run.values()]) for name, runs in variants.items()]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", nargs="+", action="append", required=True, metavar="NAME RUN",
                        help="a setting's name, then its noop run directories (repeat the option per setting)")
    parser.add_argument("--graphs", action="store_true", help="the graph replay speedups instead of eager")
    args = parser.parse_args()
    field = "graph_speedup" if args.graphs else "speedup"
    variants: dict[str, list[dict[Key, float]]] = {}
    for name, *runs in args.variant:
        if not runs:
            parser.exit(2, f"noop_variants.py: --variant {name} names no run directories\n")
        try:
            variants[name] = [run_speedups(Path(run), field) for run in runs]
        except (OSError, ValueError) as error:
            parser.exit(1, f"noop_variants.py: --variant {name}: {error}\n")
    print("\n".join(table(variants)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

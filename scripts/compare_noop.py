"""Whether two noop passes moved the same cases the same way: a deviation that repeats across passes (same sign, same
size) is systematic for that case, not noise a re-run averages out.

For every (task, case) PASSED in both sets of runs it compares the noop speedups (eager, and graph replay where both
have one): the correlation of their logs over all common cases, and each case further than `--over` from 1 in either
set, with both values and whether they agree in sign. On the H200 (2026-12-02) the fifteenth/sixteenth sessions'
pass against the twentieth's: the cases over 1% kept their sign and size (convnext_block 0.989 and 0.989,
inverted_residual 1.017 and 1.010), though over all cases the correlation was 0.21: most rows are noise. It also
prints how many of the common cases read below 1 in each set: a noop has no side to lean to, so the share tells
whether a change (a setting, a harness) moved the candidate-side lean on the same cases.

Usage: python scripts/compare_noop.py --a RUN [RUN ...] --b RUN [RUN ...] [--over 0.005] [--graphs]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fastkernels.artifacts import run_rows  # noqa: E402

Key = tuple[str, str]


def speedups(runs: list[Path], field: str = "speedup") -> dict[Key, float]:
    """(task, case) -> the noop speedup in `field` of every PASSED row that has one (the last run listed wins)."""
    found: dict[Key, float] = {}
    for run in runs:
        for row in run_rows(run):
            if row.get("status") == "PASSED" and row.get(field):
                found[(row["task"], row["case"])] = float(row[field])
    return found


def correlation(pairs: list[tuple[float, float]]) -> float:
    """Pearson correlation of the logs of the paired speedups (nan with fewer than 3 pairs or no spread)."""
    if len(pairs) < 3:
        return math.nan
    try:
        return statistics.correlation([math.log(a) for a, _ in pairs], [math.log(b) for _, b in pairs])
    except statistics.StatisticsError:  # one side constant
        return math.nan


def lean(values: list[float], significance: bool = False) -> str:
    """"B/N (P%); geometric mean G": how many speedups read below 1, and their geometric mean (a noop has no side
    to lean to; scripts/measure.py prints its splits of the lean with this too). With `significance`, also the
    two-sided binomial p of so uneven a split were each row a fair coin: 57 of 99 rows is p 0.16, 198 of 337 is
    p 0.0015."""
    below = sum(value < 1 for value in values)
    mean = math.exp(statistics.fmean(math.log(value) for value in values))
    text = f"{below}/{len(values)} ({100 * below / len(values):.0f}%); geometric mean {mean:.4f}"
    return text + f" (binomial p {binomial_p(below, len(values)):.2g})" if significance else text


def binomial_p(successes: int, trials: int) -> float:
    """Two-sided exact binomial test against one half: the chance of a split at least this uneven."""
    extreme = min(successes, trials - successes)
    tail = sum(math.comb(trials, k) for k in range(extreme + 1))
    return min(1.0, 2 * tail / 2 ** trials)


def compare(a: dict[Key, float], b: dict[Key, float], over: float) -> list[str]:
    common = sorted(set(a) & set(b))
    lines = [f"{len(common)} cases in both; correlation of log speedups {correlation([(a[k], b[k]) for k in common]):.3f}"]
    if common:  # the candidate-side lean of each set on the same cases (a noop has no side to lean to)
        lines.append("below 1 on those cases: " + ", ".join(
            f"{name} {lean([found[k] for k in common], significance=True)}" for name, found in (("a", a), ("b", b))))
    moved = [k for k in common if abs(a[k] - 1) > over or abs(b[k] - 1) > over]
    same = [k for k in moved if (a[k] - 1) * (b[k] - 1) > 0]
    lines.append(f"{len(moved)} further than {over:.1%} from 1 in either; {len(same)} of them on the same side in both")
    for key in sorted(moved, key=lambda k: -max(abs(a[k] - 1), abs(b[k] - 1))):
        mark = "same side" if key in same else "opposite"
        lines.append(f"  {key[0]}/{key[1]}: {a[key]:.4f} {b[key]:.4f} ({mark})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="the first pass's run directories")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="the second pass's run directories")
    parser.add_argument("--over", type=float, default=0.005, help="list cases further than this from 1 in either")
    parser.add_argument("--graphs", action="store_true", help="compare the graph replay speedups instead")
    args = parser.parse_args()
    field = "graph_speedup" if args.graphs else "speedup"
    try:
        print("\n".join(compare(speedups(args.a, field), speedups(args.b, field), args.over)))
    except (OSError, ValueError) as error:
        parser.exit(1, f"compare_noop.py: {error}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

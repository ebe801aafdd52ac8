"""Where did two passes' worker time differ? Tells a harness change's cost from a slower host.

Reads the workers' logs (`workers/*.log`: "[  12.34 s] task/case: phase ..." lines, each phase taking the seconds
since the line before it) of two sets of runs and, for every (task/case, phase) in both, takes the ratio of its
seconds, B over A. Per phase it prints the median ratio with its quartiles and both sums. A change costs in the
phases it touches; a host that is slower all round lengthens every phase, also the ones no change reaches (weights
built, the judge's oracle). On the H200 (2026-12-03) the twenty-seventh session's 226 cases against the same cases
of the pass before: every phase a median 1.09-1.17x longer (docs/measurement.md).

Usage: python scripts/compare_phases.py --a RUN [RUN ...] --b RUN [RUN ...] [--min-s 0.05] [--min-cases 20]
(a task in several runs of one set counts from the last run listed, as scripts/measure.py counts it)
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fastkernels.phases import phase_name  # noqa: E402

Key = tuple[str, str]  # (task/case, phase)
CASE_LINE = re.compile(r"^\[\s*([0-9.]+) s\] ([^\s/]+/[^\s:]+): (.*)$")


def phase_seconds(runs: list[Path]) -> dict[Key, float]:
    """(task/case, phase) -> seconds before its line, over the runs' worker logs (a later run's task wins)."""
    found: dict[str, dict[Key, float]] = {}
    for run in runs:
        for log in sorted((run / "workers").glob("*.log")):
            seconds: dict[Key, float] = {}
            previous = None
            for line in log.read_text(errors="replace").splitlines():
                stamp = re.match(r"^\[\s*([0-9.]+) s\]", line)
                if not stamp:
                    continue
                now = float(stamp.group(1))
                matched = CASE_LINE.match(line)
                if matched and previous is not None:
                    key = (matched.group(2), phase_name(matched.group(3)))
                    seconds[key] = seconds.get(key, 0.0) + now - previous
                previous = now
            if seconds:
                found[log.stem] = seconds
    return {key: value for per_task in found.values() for key, value in per_task.items()}


def compare(a: dict[Key, float], b: dict[Key, float], min_s: float, min_cases: int) -> list[str]:
    """One line per phase with at least `min_cases` cases over `min_s` seconds in A, most cases first."""
    ratios: dict[str, list[float]] = {}
    sums: dict[str, tuple[float, float]] = {}
    for key, seconds in a.items():
        if key in b and seconds >= min_s:
            ratios.setdefault(key[1], []).append(b[key] / seconds)
            total_a, total_b = sums.get(key[1], (0.0, 0.0))
            sums[key[1]] = (total_a + seconds, total_b + b[key])
    lines = []
    for phase, values in sorted(ratios.items(), key=lambda item: (-len(item[1]), item[0])):
        if len(values) < min_cases:
            continue
        low, _, high = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
        lines.append(f"{phase}: {len(values)} cases, B/A median {statistics.median(values):.2f}"
                     f" (quartiles {low:.2f}-{high:.2f}); A {sums[phase][0]:.0f} s, B {sums[phase][1]:.0f} s")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="the earlier pass's run directories")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="the later pass's run directories")
    parser.add_argument("--min-s", type=float, default=0.05, help="leave out phases shorter than this in A")
    parser.add_argument("--min-cases", type=int, default=20, help="leave out phases with fewer cases in both")
    args = parser.parse_args(argv)
    for run in [*args.a, *args.b]:
        if not (run / "workers").is_dir():
            print(f"compare_phases.py: {run} has no workers/ directory (a run directory holds workers/*.log)",
                  file=sys.stderr)
            return 2
    lines = compare(phase_seconds(args.a), phase_seconds(args.b), args.min_s, args.min_cases)
    print("\n".join(lines) if lines else "no phase in both sets of runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Why did a row's speedup land where it did? Reads the calls a run kept (`harness.keep_call_times=true`).

For each chosen row it prints the speedup by the harness's estimator beside other estimators of the same calls, and
splits the calls by what could tie a slow call to one side: which implementation ran first in its iteration, the
input set, whether the candidate's output was rechecked (a copy taken around that call), and the run's halves. A
split whose medians differ between the two implementations names the cause; a row whose estimators disagree has
calls of two (or more) speeds, where a median jumps between modes.

Usage: python scripts/call_times.py RUN_DIR [RUN_DIR ...] [TASK[/CASE] ...] [--over 0.02] [--estimators] [--graphs]
(default: every row that kept its calls; --over: only rows whose speedup is further than that from 1;
--estimators: for noop runs, where every speedup should be 1, each estimator's median and max |1 - s| over all the
rows instead, and how many rows it puts over 1% and 2%; --graphs: the CUDA-graph replays instead of the eager
calls, where the "input set" of an iteration is the capture it replayed)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.artifacts import run_rows  # noqa: E402
from fastkernels.records import CallTimes  # noqa: E402
from fastkernels.timing import paired_speedup, speedup_ci95  # noqa: E402


def estimators(baseline: np.ndarray, candidate: np.ndarray) -> dict[str, float]:
    """Speedup estimators over the same paired calls (the harness reports the first: timing.paired_speedup)."""
    logs = np.log(baseline / candidate)
    return {
        "interquartile mean of log ratios": paired_speedup(baseline, candidate),
        "median of ratios": float(np.exp(np.median(logs))),
        "ratio of medians": float(np.median(baseline) / np.median(candidate)),
        "mean of log ratios": float(np.exp(logs.mean())),
    }


def splits(times: CallTimes) -> dict[str, np.ndarray]:
    """Boolean masks over iterations, one per way of splitting them."""
    n = len(times.baseline_ms)
    index = np.arange(n)
    rechecked = np.zeros(n, dtype=bool)
    rechecked[times.rechecked] = True
    masks = {"baseline ran first": np.array([first == "baseline" for first in times.first]),
             "rechecked": rechecked, "second half": index >= n // 2}
    masks.update({f"input set {k}": index % times.input_sets == k for k in range(times.input_sets)})
    return masks


def describe(label: str, times: CallTimes) -> list[str]:
    baseline, candidate = np.asarray(times.baseline_ms) * 1e3, np.asarray(times.candidate_ms) * 1e3
    lines = [f"{label}: {len(baseline)} iterations, baseline median {np.median(baseline):.2f} us, candidate "
             f"{np.median(candidate):.2f} us"]
    lines += [f"  {name:34s} {value:.4f}" for name, value in estimators(baseline, candidate).items()]
    for name, mask in splits(times).items():
        if mask.all() or not mask.any():
            continue
        parts = []
        for side, values in (("baseline", baseline), ("candidate", candidate)):
            parts.append(f"{side} {np.median(values[mask]):.2f} us (else {np.median(values[~mask]):.2f})")
        ratio = np.median(baseline[mask] / candidate[mask])
        lines.append(f"  {name:22s} ({mask.sum():3d} of {len(mask)}): {', '.join(parts)}; "
                     f"median ratio there {ratio:.4f}")
    for side, values in (("baseline", baseline), ("candidate", candidate)):
        q = np.percentile(values, [5, 25, 50, 75, 95])
        lines.append(f"  {side:9s} percentiles 5/25/50/75/95: " + " ".join(f"{v:.2f}" for v in q) + " us")
    return lines


def compare_estimators(rows: list[dict]) -> list[str]:
    """Each estimator's distance from 1 over noop rows (a module against itself: every speedup should be 1)."""
    distances: dict[str, list[tuple[float, str]]] = {}
    for row in rows:
        times = CallTimes.model_validate(row["call_times"])
        values = estimators(np.asarray(times.baseline_ms), np.asarray(times.candidate_ms))
        for name, value in values.items():
            distances.setdefault(name, []).append((abs(1 - value), f"{row['task']}/{row['case']}"))
    lines = [f"{len(rows)} noop rows; |1 - s| by estimator (the harness reports the first):"]
    for name, found in distances.items():
        values = np.array([d for d, _ in found])
        worst = max(found)
        lines.append(f"  {name:34s} median {np.median(values):.2%}, max {worst[0]:.2%} ({worst[1]}), "
                     f"{int((values > 0.02).sum())} over 2%, {int((values > 0.01).sum())} over 1%")
    lines.append("95% intervals of the harness's estimator that hold 1 (a calibrated interval: ~95% of noop rows):")
    for label, by_set in (("iterations resampled", False), ("input sets, then iterations, resampled", True)):
        held = 0
        for row in rows:
            times = CallTimes.model_validate(row["call_times"])
            low, high = speedup_ci95(times.baseline_ms, times.candidate_ms,
                                     clusters=times.input_sets if by_set else 1)
            held += low <= 1.0 <= high
        lines.append(f"  {label:38s} {held} of {len(rows)} ({held / len(rows):.1%})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="run directories, then TASK or TASK/CASE to choose rows")
    parser.add_argument("--over", type=float, default=0.0, help="only rows with |1 - speedup| above this")
    parser.add_argument("--estimators", action="store_true", help="compare estimators over every (noop) row")
    parser.add_argument("--graphs", action="store_true", help="the graph replays' times (graph_call_times)")
    args = parser.parse_args(argv)
    runs = [Path(path) for path in args.paths if Path(path).is_dir()]
    chosen = [path for path in args.paths if not Path(path).is_dir()]
    if not runs:
        parser.error(f"no run directory among {args.paths}")
    try:
        rows = [row for run in runs for row in run_rows(run)]
    except ValueError as error:
        parser.error(str(error))
    if args.graphs:  # the replays, read as if they were the eager calls
        rows = [{**row, "call_times": row.get("graph_call_times"), "speedup": row.get("graph_speedup")}
                for row in rows]
    kept = [row for row in rows if row.get("call_times") and row["call_times"]["candidate_ms"]]
    if chosen:
        kept = [row for row in kept if row["task"] in chosen or f"{row['task']}/{row['case']}" in chosen]
    if not kept:
        parser.error(f"{', '.join(map(str, runs))}: no matching row kept its calls (run with "
                     "harness.keep_call_times=true)")
    if args.estimators:
        print("\n".join(compare_estimators(kept)))
        return 0
    far = [row for row in kept if abs(1 - row["speedup"]) > args.over]
    if not far:
        print(f"{len(kept)} row(s) kept their calls; none has a speedup further than {args.over:g} from 1")
    kept = far
    for row in kept:
        print("\n".join(describe(f"{row['task']}/{row['case']} [{row.get('baseline_impl')}] speedup "
                                 f"{row['speedup']:.4f}", CallTimes.model_validate(row["call_times"]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

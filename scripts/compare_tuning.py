"""Did restored tuning picks serve a compiled baseline as well as tuning afresh? Two passes' Inductor baselines
compared case by case, grouped by how each side got its configuration.

Each row's `baseline_alternatives` gives every implementation's time in the baseline choice, and its
`compile_events` what Inductor did in that implementation's first calls (fastkernels/compile_events.py; rows before
2026-12-07 lack it, and then the worker log's line "TASK/CASE: N baseline(s) checked (Inductor: IMPL: EVENTS; ...)"
says it): `coordesc_tuning_bench` there means coordinate descent tuned afresh, its absence that the configuration
came from the caches (restored picks). For every Inductor implementation timed in both
passes the script prints the ratio NEW / OLD per implementation and group (fresh -> restored, ...): a group whose
ratio leans above 1 is one where the picks did not carry what tuning had found.

  python scripts/compare_tuning.py --old RUN [RUN ...] --new RUN [RUN ...]

A task-case in several runs of one side counts once, from the first run listed (list the newest first)."""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastkernels.artifacts import run_rows  # noqa: E402

INDUCTOR = ("torch_compile_max_autotune", "torch_compile")
CHECKED = re.compile(r"\] (\S+?)/(\S+): \d+ baseline\(s\) checked \(Inductor: (.*)\)\s*$")

Key = tuple[str, str, str]  # task, case, implementation


def tuned_afresh(run: Path) -> dict[Key, bool]:
    """(task, case, implementation) -> whether coordinate descent ran in its first calls, from the worker logs (for
    rows without `compile_events`)."""
    found: dict[Key, bool] = {}
    for log in sorted((run / "workers").glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            match = CHECKED.search(line)
            if match:
                for part in match.group(3).split("; "):
                    impl, _, events = part.partition(": ")
                    found[(match.group(1), match.group(2), impl)] = "coordesc_tuning_bench" in events
    return found


def side(runs: list[Path]) -> dict[Key, tuple[float, bool]]:
    """(task, case, implementation) -> (its time in the baseline choice, tuned afresh) over one side's runs."""
    out: dict[Key, tuple[float, bool]] = {}
    for run in runs:
        fresh = tuned_afresh(run)
        for row in run_rows(run):
            for impl, time in (row.get("baseline_alternatives") or {}).items():
                key = (row["task"], row["case"], impl)
                if impl in INDUCTOR and isinstance(time, (int, float)) and key not in out:
                    events = row["compile_events"].get(impl, {}) if "compile_events" in row else None
                    tuned = "coordesc_tuning_bench" in events if events is not None else fresh.get(key, False)
                    out[key] = (float(time), tuned)
    return out


def compare(old: dict[Key, tuple[float, bool]], new: dict[Key, tuple[float, bool]]) -> dict[str, list[tuple]]:
    """Ratios NEW / OLD by group ("torch_compile: fresh -> restored", ...), each (ratio, task, case, implementation)."""
    name = {True: "fresh", False: "restored"}
    groups: dict[str, list[tuple]] = {}
    for key in sorted(old.keys() & new.keys()):
        (t_old, f_old), (t_new, f_new) = old[key], new[key]
        groups.setdefault(f"{key[2]}: {name[f_old]} -> {name[f_new]}", []).append((t_new / t_old, *key))
    return groups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, nargs="+", required=True, help="the earlier pass's run directories")
    parser.add_argument("--new", type=Path, nargs="+", required=True, help="the later pass's run directories")
    args = parser.parse_args()
    try:
        groups = compare(side(args.old), side(args.new))
    except (OSError, ValueError) as error:
        parser.exit(1, f"compare_tuning.py: {error}\n")
    if not groups:
        parser.exit(1, "compare_tuning.py: no Inductor implementation was timed in both passes\n")
    for group, items in sorted(groups.items()):
        ratios = [item[0] for item in items]
        print(f"{group}: {len(items)} implementation-cases, NEW / OLD median {statistics.median(ratios):.3f}, "
              f"{min(ratios):.3f}-{max(ratios):.3f}")
        for ratio, task, case, impl in sorted(items, reverse=True)[:3]:
            print(f"  {ratio:.3f} {task}/{case} {impl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""MacroEval: turns per-(task, case) result rows into the leaderboard numbers.

Kernel level (this module): a task is the unit that is correct or not, so case rows are first folded into one
`TaskResult` per task; levels and categories are then aggregated over tasks, never over rows, so a task with many cases
weighs no more than one with a single case. End to end (model families): see `fastkernels.endtoend`, re-exported here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable

from pydantic import BaseModel, ConfigDict

from fastkernels.endtoend import EndToEndReport, FamilyReport, ModelResult, ModelScore, end_to_end_score
from fastkernels.records import ResultRow, Status

__all__ = [
    "CategoryReport", "EndToEndReport", "ExcludedTask", "FamilyReport", "KernelLevelReport", "LevelReport",
    "ModelResult", "ModelScore", "TaskResult", "end_to_end_score", "fast_p", "fast_p_ci95", "format_table", "geomean",
    "kernel_level",
]


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean, the only mean under which a 2x win and a 2x loss cancel; None for no values."""
    vals = list(values)
    if not vals:
        return None
    bad = [v for v in vals if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"geomean needs finite positive values, got {bad[:3]}")
    return math.exp(math.fsum(math.log(v) for v in vals) / len(vals))


class TaskResult(BaseModel):
    """One task folded from its case rows.

    `speedup` is the geomean of the cases' speedups when every case PASSED; 1.0 when the task was not attempted
    (the baseline stands in: "no win"); None when any case failed (a failed task earns no speedup).
    `speedup_low` is a conservative lower 95% bound of it: the geomean of the cases' lower interval bounds (None
    where a case has no interval or the task earned no speedup). `candidate_compile_s` adds up the candidate's
    compile time over the cases that measured it (its first call beyond a steady one: what deploying it costs once
    per shape, never part of its speedup).
    """

    model_config = ConfigDict(extra="forbid")

    task: str
    level: int
    categories: list[str]
    cases: int
    attempted: bool
    correct: bool
    speedup: float | None
    speedup_low: float | None = None
    candidate_compile_s: float | None = None


class ExcludedTask(BaseModel):
    """A task with a BASELINE_ERROR row: a harness/baseline defect, not the agent's, so it is left out of every score."""

    model_config = ConfigDict(extra="forbid")

    task: str
    level: int
    categories: list[str]
    reason: str
    statuses: dict[str, int]


class LevelReport(BaseModel):
    """Per level. fast_1/fast_2 divide by ALL scored tasks of the level (KernelBench's fast_p), geomean by correct ones.
    fast_1_ci95/fast_2_ci95 count only tasks whose speedup's lower 95% bound is above p: a noop run, whose speedups
    scatter around 1.0, scores about half of its tasks fast_1 and none fast_1_ci95."""

    model_config = ConfigDict(extra="forbid")

    level: int
    tasks: int
    attempted: int
    correct: int
    geomean_speedup: float | None
    fast_1: float
    fast_2: float
    fast_1_ci95: float
    fast_2_ci95: float
    statuses: dict[str, int]


class CategoryReport(BaseModel):
    """Per category (a task counts in each of its categories)."""

    model_config = ConfigDict(extra="forbid")

    category: str
    tasks: int
    correct: int
    correct_share: float
    geomean_speedup: float | None


class KernelLevelReport(BaseModel):
    """The kernel-level leaderboard. `category_macro` is the plain mean of the per-category geomeans (categories with
    no correct task are reported but left out of it), so a category with many tasks does not dominate."""

    model_config = ConfigDict(extra="forbid")

    levels: list[LevelReport]
    categories: list[CategoryReport]
    category_macro: float | None
    category_correct_macro: float | None
    tasks: list[TaskResult]
    excluded: list[ExcludedTask]


def fast_p(tasks: list[TaskResult], p: float) -> float:
    """KernelBench's fast_p: share of ALL tasks that are correct and strictly faster than p (0.0 for no tasks)."""
    if not tasks:
        return 0.0
    return sum(1 for t in tasks if t.correct and t.speedup is not None and t.speedup > p) / len(tasks)


def fast_p_ci95(tasks: list[TaskResult], p: float) -> float:
    """fast_p counted only where the win is resolved: share of ALL tasks that are correct with speedup_low > p."""
    if not tasks:
        return 0.0
    return sum(1 for t in tasks if t.correct and t.speedup_low is not None and t.speedup_low > p) / len(tasks)


def _status_counts(rows: Iterable[ResultRow]) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for r in rows:
        counts[r.status.value] += 1
    return counts


def _fold(task: str, rows: list[ResultRow]) -> TaskResult | ExcludedTask:
    """Fold one task's case rows; refuse rows that disagree on what the task is or repeat a case."""
    first = rows[0]
    for r in rows[1:]:
        if r.level != first.level or sorted(r.categories) != sorted(first.categories):
            raise ValueError(f"task {task!r}: rows disagree on level/categories")
    cases = [r.case for r in rows]
    if len(set(cases)) != len(cases):
        raise ValueError(f"task {task!r}: duplicate case rows {sorted(c for c in set(cases) if cases.count(c) > 1)}")
    statuses = {r.status for r in rows}
    if Status.BASELINE_ERROR in statuses:
        bad = next(r for r in rows if r.status is Status.BASELINE_ERROR)
        return ExcludedTask(task=task, level=first.level, categories=first.categories,
                            reason=f"{bad.case}: {bad.reason}", statuses=_status_counts(rows))
    attempted = statuses != {Status.NOT_ATTEMPTED}
    correct = statuses == {Status.PASSED}
    speedup_low = None
    if correct:
        speedup = geomean(r.speedup for r in rows if r.speedup is not None)
        if all(r.speedup_ci95 is not None for r in rows):
            speedup_low = geomean(r.speedup_ci95[0] for r in rows if r.speedup_ci95 is not None)
    else:
        speedup = None if attempted else 1.0
    compiled = [r.compile_s["candidate"] for r in rows if "candidate" in r.compile_s]
    return TaskResult(task=task, level=first.level, categories=first.categories, cases=len(rows),
                      attempted=attempted, correct=correct, speedup=speedup, speedup_low=speedup_low,
                      candidate_compile_s=round(sum(compiled), 3) if compiled else None)


def kernel_level(rows: list[ResultRow]) -> KernelLevelReport:
    """Aggregate one run's rows (one mode: independent and composed scores are different questions).

    A task is correct only if every case PASSED; its speedup is the geomean of its cases. NOT_ATTEMPTED tasks are
    not correct and stand in at 1.0x ("no win"): they count in the fast_p denominators, never in the numerators or the
    geomean. A task with any BASELINE_ERROR row is excluded from every aggregate (status counts included) and listed
    in `excluded`.
    """
    modes = {r.mode for r in rows}
    if len(modes) > 1:
        raise ValueError(f"rows mix modes {sorted(modes)}; score each mode separately")
    by_task: dict[str, list[ResultRow]] = defaultdict(list)
    for r in rows:
        by_task[r.task].append(r)
    scored: list[TaskResult] = []
    excluded: list[ExcludedTask] = []
    for name in sorted(by_task):
        folded = _fold(name, by_task[name])
        (excluded if isinstance(folded, ExcludedTask) else scored).append(folded)

    scored_names = {t.task for t in scored}
    levels = []
    for level in sorted({t.level for t in scored}):
        ts = [t for t in scored if t.level == level]
        levels.append(LevelReport(
            level=level, tasks=len(ts), attempted=sum(t.attempted for t in ts), correct=sum(t.correct for t in ts),
            geomean_speedup=geomean(t.speedup for t in ts if t.correct and t.speedup is not None),
            fast_1=fast_p(ts, 1.0), fast_2=fast_p(ts, 2.0), fast_1_ci95=fast_p_ci95(ts, 1.0),
            fast_2_ci95=fast_p_ci95(ts, 2.0),
            statuses=_status_counts(r for r in rows if r.level == level and r.task in scored_names)))

    categories = []
    for cat in sorted({c for t in scored for c in t.categories}):
        ts = [t for t in scored if cat in t.categories]
        n_correct = sum(t.correct for t in ts)
        categories.append(CategoryReport(
            category=cat, tasks=len(ts), correct=n_correct, correct_share=n_correct / len(ts),
            geomean_speedup=geomean(t.speedup for t in ts if t.correct and t.speedup is not None)))
    cat_speedups = [c.geomean_speedup for c in categories if c.geomean_speedup is not None]
    return KernelLevelReport(
        levels=levels, categories=categories,
        category_macro=sum(cat_speedups) / len(cat_speedups) if cat_speedups else None,
        category_correct_macro=sum(c.correct_share for c in categories) / len(categories) if categories else None,
        tasks=scored, excluded=excluded)


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}x"


def _table(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    return [fmt(header), "  ".join("-" * w for w in widths), *(fmt(row) for row in body)]


def format_table(report: KernelLevelReport) -> str:
    """Plain-text summary printed at the end of a run: levels, then categories, then excluded tasks."""
    if not report.levels and not report.excluded:
        return "no tasks scored"
    lines = _table(
        ["level", "tasks", "attempted", "correct", "geomean speedup", "fast_1", "fast_2", "fast_1 (95%)",
         "fast_2 (95%)"],
        [[f"L{lv.level}", str(lv.tasks), str(lv.attempted), str(lv.correct), _x(lv.geomean_speedup),
          f"{lv.fast_1:.1%}", f"{lv.fast_2:.1%}", f"{lv.fast_1_ci95:.1%}", f"{lv.fast_2_ci95:.1%}"]
         for lv in report.levels])
    if report.categories:
        lines += ["", *_table(
            ["category", "tasks", "correct", "correct share", "geomean speedup"],
            [[c.category, str(c.tasks), str(c.correct), f"{c.correct_share:.1%}", _x(c.geomean_speedup)]
             for c in report.categories])]
        lines.append(f"category macro mean: {_x(report.category_macro)} speedup (over categories with a correct task), "
                     f"{report.category_correct_macro:.1%} correct")
    if report.excluded:
        lines += ["", f"excluded ({len(report.excluded)} task(s), baseline error):"]
        lines += [f"  L{e.level} {e.task}: {e.reason}" for e in report.excluded]
    return "\n".join(lines)

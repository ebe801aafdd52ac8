"""`python -m fastkernels list`: the task library at a glance.

Prints the tasks by level and model family (a task's first family; manifest.FAMILIES), each on one line with the architectures it serves,
the production module it mirrors, its CPU and GPU case counts, its components (level 2 and up) and its production
implementations in order, with their provenance and requirements; a production implementation whose libraries do not
import here is marked `[missing …]`. `--json` prints the same fields as a list of objects for machines.

Every manifest is loaded (a listing doubles as a check of the library): a broken one is a one-line error on stderr
and exit status 2, as for a run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from itertools import groupby
from pathlib import Path

from pydantic import BaseModel

from fastkernels.config import TASKS_DIR
from fastkernels.manifest import Implementation, Manifest, ManifestError
from fastkernels.registry import Registry, UnknownTaskError

LEVELS = (1, 2, 3, 4)


class MirrorsEntry(BaseModel):
    library: str
    module: str
    symbol: str


class CaseCounts(BaseModel):
    cpu: int
    gpu: int


class ProductionEntry(BaseModel):
    """One production implementation; `requires` are the libraries it imports, `devices` where it runs."""

    name: str
    source: str
    provenance: str
    requires: list[str]
    devices: list[str]
    importable: bool
    missing: list[str]


class TaskEntry(BaseModel):
    name: str
    level: int
    family: str
    families: list[str]
    categories: list[str]
    architectures: list[str]
    mirrors: MirrorsEntry
    cases: CaseCounts
    components: list[str]
    production: list[ProductionEntry]


def missing_modules(requires: list[str]) -> list[str]:
    """Those of `requires` that do not import here (found by importlib.util.find_spec, nothing is imported)."""
    missing = []
    for module in requires:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a dotted name whose parent package is absent
            found = False
        if not found:
            missing.append(module)
    return missing


def production_entry(implementation: Implementation) -> ProductionEntry:
    missing = missing_modules(implementation.requires)
    return ProductionEntry(
        name=implementation.name,
        source=implementation.source,
        provenance=" ".join(implementation.provenance.split()),
        requires=list(implementation.requires),
        devices=list(implementation.devices),
        importable=not missing,
        missing=missing,
    )


def task_entry(manifest: Manifest) -> TaskEntry:
    return TaskEntry(
        name=manifest.name,
        level=manifest.level,
        family=manifest.families[0],
        families=list(manifest.families),
        categories=list(manifest.categories),
        architectures=list(manifest.architectures),
        mirrors=MirrorsEntry(**manifest.mirrors.model_dump()),
        cases=CaseCounts(
            cpu=sum(case.tier == "cpu" for case in manifest.cases),
            gpu=sum(case.tier == "gpu" for case in manifest.cases),
        ),
        components=list(manifest.components),
        production=[production_entry(implementation) for implementation in manifest.implementations.production],
    )


def load_entries(root: Path) -> list[TaskEntry]:
    """Every task under `root`, ordered by level, family, name. Raises ManifestError / UnknownTaskError."""
    registry = Registry(root=root)
    entries = [task_entry(registry.get(name)) for name in registry.names]
    return sorted(entries, key=lambda entry: (entry.level, entry.family, entry.name))


def describe_production(entry: ProductionEntry) -> str:
    """`liger (Liger-Kernel LigerRMSNorm (Triton); needs liger_kernel, cuda) [missing liger_kernel]`."""
    needs = list(entry.requires)
    if set(entry.devices) != {"cpu", "cuda"}:
        needs += entry.devices
    details = [entry.provenance] if entry.provenance else []
    if needs:
        details.append(f"needs {', '.join(needs)}")
    text = f"{entry.name} ({'; '.join(details)})" if details else entry.name
    if entry.missing:
        text += f" [missing {', '.join(entry.missing)}]"
    return text


def render_text(entries: list[TaskEntry]) -> str:
    """Aligned plain text: a block per level with a header row, a sub-heading per family, a line per task."""
    lines: list[str] = []
    for level, level_entries in groupby(entries, key=lambda entry: entry.level):
        level_entries = list(level_entries)
        header = ["task", "categories", "architectures", "library", "mirrors", "cases cpu/gpu"]
        if level >= 2:
            header.append("components")
        header.append("production (in order)")
        rows = []
        for entry in level_entries:
            row = [
                entry.name,
                ", ".join(entry.categories),
                ", ".join(entry.architectures),
                entry.mirrors.library,
                f"{entry.mirrors.module}.{entry.mirrors.symbol}",
                f"{entry.cases.cpu}/{entry.cases.gpu}",
            ]
            if level >= 2:
                row.append(", ".join(entry.components) or "-")
            row.append(", ".join(describe_production(p) for p in entry.production) or "-")
            rows.append((entry.family, row))
        widths = [max(len(cells[i]) for cells in [header, *(row for _, row in rows)]) for i in range(len(header))]

        def line(cells: list[str]) -> str:
            padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths[:-1])]
            return ("    " + "  ".join([*padded, cells[-1]])).rstrip()

        if lines:
            lines.append("")
        count = len(level_entries)
        lines.append(f"L{level} ({count} task{'s' if count != 1 else ''})")
        lines.append(line(header))
        for family, family_rows in groupby(rows, key=lambda pair: pair[0]):
            lines.append(f"  {family}")
            lines.extend(line(row) for _, row in family_rows)
    return "\n".join(lines)


def _levels(text: str) -> list[int]:
    """`2`, `1,2` or `1 2` (with nargs): levels 1 to 4."""
    levels = []
    for part in text.replace(",", " ").split():
        try:
            level = int(part.removeprefix("L").removeprefix("l"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a level (1-4)") from None
        if level not in LEVELS:
            raise argparse.ArgumentTypeError(f"{part!r} is not a level (1-4)")
        levels.append(level)
    return levels


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog="python -m fastkernels list",
        description="List the tasks by level and family: architectures, mirrored library, cases, components, "
        "production implementations with provenance and requirements.",
    )
    result.add_argument("--json", action="store_true", help="print a JSON list of task objects instead of text")
    result.add_argument(
        "--level", dest="levels", action="append", nargs="+", type=_levels, metavar="N",
        help="only these levels (repeat, or give a list: --level 1 2, --level 1,2)",
    )
    result.add_argument(
        "--category", dest="categories", action="append", nargs="+", metavar="C",
        help="only tasks with any of these categories (repeat, or give a list)",
    )
    result.add_argument("--tasks-root", type=Path, default=TASKS_DIR, help=argparse.SUPPRESS)
    return result


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        entries = load_entries(args.tasks_root)
    except (ManifestError, UnknownTaskError) as error:
        print(f"fastkernels: error: {error}", file=sys.stderr)
        return 2
    if args.categories:
        wanted = {category for group in args.categories for part in group for category in part.split(",") if category}
        known = {category for entry in entries for category in entry.categories}
        unknown = sorted(wanted - known)
        if unknown:
            print(
                f"fastkernels: error: no task has category {', '.join(map(repr, unknown))};"
                f" known: {', '.join(sorted(known))}",
                file=sys.stderr,
            )
            return 2
        entries = [entry for entry in entries if wanted & set(entry.categories)]
    if args.levels:
        levels = {level for group in args.levels for parts in group for level in parts}
        entries = [entry for entry in entries if entry.level in levels]
    if args.json:
        print(json.dumps([entry.model_dump(mode="json") for entry in entries], indent=2))
    elif entries:
        print(render_text(entries))
    else:
        print("no tasks match", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

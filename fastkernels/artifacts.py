"""Atomic artifact writes: a reader (or a crash) never sees a half-written file.

Each file is written to a temporary sibling, fsynced, then renamed over the target (rename is atomic on POSIX).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=2)
    else:
        text = json.dumps(data, indent=2, sort_keys=True, default=str)
    write_atomic(path, text + "\n")


def write_jsonl(path: Path, rows: Iterable[BaseModel]) -> None:
    write_atomic(path, "".join(row.model_dump_json() + "\n" for row in rows))


def run_rows(run_dir: Path) -> list[dict[str, Any]]:
    """A run directory's result rows as dicts: results.jsonl, or, for a run cut short before writing it, the rows its
    workers appended as each case finished (workers/*.rows.jsonl)."""
    results = run_dir / "results.jsonl"
    files = [results] if results.exists() else sorted((run_dir / "workers").glob("*.rows.jsonl"))
    if not files:
        raise ValueError(f"{run_dir}: no results.jsonl and no workers/*.rows.jsonl (not a run directory?)")
    return [json.loads(line) for path in files for line in path.read_text().splitlines() if line.strip()]

"""Test helper: a finished noop run directory, as the scripts that compare noop runs read it."""

from __future__ import annotations

import json
from pathlib import Path


def noop_run(directory: Path, speedups: dict[str, float]) -> Path:
    """`directory` holding a results.jsonl of task "t": a PASSED row per case with its eager speedup (graph replay
    1.0), and one failed row, which the scripts must leave out."""
    directory.mkdir(parents=True)
    rows = [{"task": "t", "case": case, "status": "PASSED", "speedup": s, "graph_speedup": 1.0}
            for case, s in speedups.items()]
    rows.append({"task": "t", "case": "broken", "status": "RUNTIME_ERROR", "speedup": None})
    (directory / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return directory

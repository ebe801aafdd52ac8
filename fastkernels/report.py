"""`python -m fastkernels.report RUN_DIR [RUN_DIR ...]`: a Markdown table of a run's results.jsonl.

One line per (task, case): status, baseline implementation, baseline and candidate time in microseconds, speedup
with its 95% interval, and the fraction of the hardware peak each side reaches. Used for the docs' measured tables.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _us(ms: float | None) -> str:
    return f"{ms * 1e3:.1f}" if ms is not None else "—"


def _frac(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


def results_table(run_dir: Path) -> str:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    environment = json.loads((run_dir / "env.json").read_text()) if (run_dir / "env.json").exists() else {}
    lines = [
        f"run `{run_dir.name}`: agent={rows[0]['agent'] if rows else '?'}, device {environment.get('device', {}).get('name', '?')},"
        f" wall {environment.get('wall_s', '?')} s",
        "",
        "| task | case | status | baseline (impl) | baseline µs | candidate µs | speedup [95% CI] | baseline % peak | candidate % peak |",
        "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: |",
    ]
    for row in rows:
        ci = row.get("speedup_ci95")
        speed = f"{row['speedup']:.3f}" if row.get("speedup") is not None else "—"
        if ci and row.get("candidate_ms") is not None:
            speed += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
        lines.append(
            f"| {row['task']} | {row['case']} | {row['status']} | {row.get('baseline_impl') or '—'} |"
            f" {_us(row.get('baseline_ms'))} | {_us(row.get('candidate_ms'))} | {speed} |"
            f" {_frac(row.get('baseline_fraction_of_peak'))} | {_frac(row.get('candidate_fraction_of_peak'))} |"
        )
    timed = [row["speedup"] for row in rows if row.get("candidate_ms") is not None]
    if timed:
        deviation = [abs(1 - s) for s in timed]
        lines += ["", f"speedups: {len(timed)} timed rows, median |1-s| = {statistics.median(deviation):.4f},"
                      f" max |1-s| = {max(deviation):.4f}, min {min(timed):.3f}, max {max(timed):.3f}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    print("\n\n".join(results_table(Path(arg)) for arg in args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

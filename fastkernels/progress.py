"""Progress over task x case: a tqdm bar on a terminal, one plain log line per case otherwise."""

from __future__ import annotations

import logging
import sys

from tqdm import tqdm

from fastkernels.records import ResultRow

log = logging.getLogger("fastkernels")


class Progress:
    def __init__(self, total: int, interactive: bool | None = None) -> None:
        self.total, self.done = total, 0
        self.interactive = sys.stderr.isatty() if interactive is None else interactive
        self._bar = tqdm(total=total, unit="case", dynamic_ncols=True) if self.interactive else None

    def row(self, row: ResultRow) -> None:
        self.done += 1
        speed = f" {row.speedup:.3f}x" if row.speedup is not None and row.candidate_ms is not None else ""
        text = f"[{self.done}/{self.total}] {row.task}/{row.case} {row.status.value}{speed}"
        if self._bar is not None:
            self._bar.set_postfix_str(f"{row.task}/{row.case} {row.status.value}{speed}", refresh=False)
            self._bar.update(1)
            if row.status.value not in ("PASSED", "NOT_ATTEMPTED"):
                self._bar.write(f"{text}: {row.reason}")
        else:
            log.info("%s%s", text, f": {row.reason}" if row.reason and row.status.value != "PASSED" else "")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

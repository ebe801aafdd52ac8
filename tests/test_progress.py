"""Progress: one plain log line per finished case when stderr is not a terminal."""

from __future__ import annotations

import logging

from fastkernels.progress import Progress
from fastkernels.records import ResultRow, Status


def test_plain_log_lines_count_cases_and_show_failures(caplog):
    progress = Progress(total=2, interactive=False)
    with caplog.at_level(logging.INFO, logger="fastkernels"):
        progress.row(ResultRow(task="t", level=1, categories=["c"], case="a", status=Status.NOT_ATTEMPTED, baseline_ms=1.0))
        progress.row(ResultRow(task="t", level=1, categories=["c"], case="b", status=Status.TIMEOUT, reason="killed"))
    progress.close()
    assert caplog.messages == ["[1/2] t/a NOT_ATTEMPTED", "[2/2] t/b TIMEOUT: killed"]

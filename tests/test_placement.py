"""harness.placement_spacer_mb: a spacer of random size before each instance is built, so that where an instance
lands changes from run to run (fastkernels/placement.py)."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from fastkernels.placement import GRANULE_MB, Spacers
from fastkernels.records import Status
from scoring import score


def test_each_build_gets_a_spacer_of_whole_pages_up_to_the_limit_held_until_release():
    draws = iter([3, 0, 5])
    spacers = Spacers(10.0, "cpu", draw=lambda bound: min(next(draws), bound - 1))
    for _ in range(3):
        spacers.before_build()
    assert spacers.sizes_mb == [6, 0, 10]  # 0..5 pages of 2 MB, uniformly: 0 allocates nothing
    assert [held.numel() for held in spacers._held] == [6 * 2**20, 10 * 2**20]
    assert all(held.dtype is torch.uint8 for held in spacers._held)
    assert spacers.describe() == "placement spacers 6, 0, 10 MB"
    spacers.release()
    assert spacers._held == [] and spacers.sizes_mb == [6, 0, 10]  # the log still says what was drawn


def test_no_spacer_below_one_page_and_the_default_draws_from_os_entropy():
    off = Spacers(GRANULE_MB - 0.5, "cpu")
    off.before_build()
    assert off.sizes_mb == [] and off.describe() == ""
    drawn = Spacers(64.0, "cpu")
    for _ in range(40):
        drawn.before_build()
    assert all(size % GRANULE_MB == 0 and 0 <= size <= 64 for size in drawn.sizes_mb)
    assert len(set(drawn.sizes_mb)) > 5  # secrets.randbelow: not one fixed layout
    drawn.release()


def test_a_run_with_spacers_places_every_instance_and_says_so_in_the_worker_log(tmp_path):
    rows = score(None, tmp_path, "silu_and_mul", "harness.placement_spacer_mb=8", "harness.instances=2")
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    log = (Path(tmp_path) / "silu_and_mul.log").read_text()
    placed = re.findall(r"candidate checked \(placement spacers ([\d, ]+) MB\)", log)
    assert len(placed) == len(rows)  # every case
    for sizes in placed:  # the production contenders, the candidate, and one more instance a side
        drawn = [int(size) for size in sizes.split(", ")]
        assert len(drawn) >= 4 and all(size % 2 == 0 and size <= 8 for size in drawn)

"""Random spacers before each instance is built (`harness.placement_spacer_mb`), so that where its tensors land in
device memory changes from run to run.

Why: on the H200 the noop deviations over 1% repeated between two all-task passes with their sign and mostly their
size (convnext_block 0.9891 and 0.9889, conv_bn_act 1.0103 and 1.0087; 2026-12-01/02, scripts/compare_noop.py),
while over all cases the passes hardly correlated. The likely cause: a worker allocates in the same order every run,
so each instance's weights land in the same place each time and a case keeps its placement bias however often it
is re-run. A spacer of random size, drawn from OS entropy and allocated just before an instance is built, moves
that instance and what follows it: a placement bias then varies from run to run (it shows in the five-run spread,
and re-runs average it) instead of sitting in every run alike. Randomising memory layout to make timing comparisons
statistically sound is the idea of Curtsinger and Berger's STABILIZER (2013). Off by default until the H200 shows
what it does (docs/progress.md); `harness.instances` averages over placements within one run instead.
"""

from __future__ import annotations

import secrets
from typing import Callable

import torch

GRANULE_MB = 2  # the CUDA driver maps device memory in 2 MiB pages; a spacer is a whole number of them


class Spacers:
    """The spacers of one case: `before_build()` before each instance, `release()` when the case ends. On the CPU
    profile they are host memory (where the same path runs in CI)."""

    def __init__(self, max_mb: float, device: str, draw: Callable[[int], int] = secrets.randbelow) -> None:
        self.granules = int(max_mb // GRANULE_MB)
        self.device = device
        self._draw = draw
        self.sizes_mb: list[int] = []
        self._held: list[torch.Tensor] = []

    def before_build(self) -> None:
        """Allocate a spacer of 0 to placement_spacer_mb MB (whole granules, uniformly), held until `release`."""
        if not self.granules:
            return
        size_mb = self._draw(self.granules + 1) * GRANULE_MB
        self.sizes_mb.append(size_mb)
        if size_mb:
            self._held.append(torch.empty(size_mb * 2**20, dtype=torch.uint8, device=self.device))

    def describe(self) -> str:
        """For the worker log: the spacers drawn this case, in build order."""
        return "placement spacers " + ", ".join(str(size) for size in self.sizes_mb) + " MB" if self.sizes_mb else ""

    def release(self) -> None:
        self._held.clear()

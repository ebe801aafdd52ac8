"""The judge's ledger of timed rechecks: the seeds the checked calls' inputs come from, which calls are picked, and
the outputs handed in for them.

It lives in the judge process (judge.py), not in the worker. Candidate code runs in the worker and can overwrite
anything the worker keeps about a call: with the seed kept there, a candidate could refill every call's inputs from
one seed of its own and return one cached output, and the recheck, rebuilding the inputs from the seed it was left,
would find that output right. Here the judge issues each checked call's seed before the call (the worker only
refills the inputs with it), decides after the call whether it is rechecked (recheck_picks.OnlinePicks, fresh
entropy), answers each call's decision once, takes an output only for the pick it made last, and rebuilds the
inputs itself from the seed it issued. Whatever the worker does with its copy of the seed, the output is judged on
the inputs the judge drew.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastkernels.inputs import unpredictable_seed
from fastkernels.recheck_picks import OnlinePicks


@dataclass(frozen=True)
class Taken:
    """A picked call whose output was handed in: the judge rebuilds its inputs from `seed`."""

    index: int
    seed: int
    output: Any


class RecheckLedger:
    """One batch of timed calls at a time: `start_batch`, then per checked call `issue_seed` before it and `decide`
    after it (and `hand_in` when picked), then `close_batch`."""

    def __init__(self) -> None:
        self.batch = -1
        self._picks: OnlinePicks | None = None
        self._issued: tuple[int, int] | None = None  # (call index, seed) of the call whose decision is due
        self._picked: list[list[Any]] = []  # [index, seed, output or None] of this batch's picks

    def start_batch(self, count: int, wanted: int, classes: int = 0) -> None:
        """A batch of `count` checked calls, `wanted` of them rechecked, one of each of `classes` (graph captures)."""
        self.batch += 1
        self._picks = OnlinePicks(count, wanted, classes)
        self._issued, self._picked = None, []

    def issue_seed(self, index: int) -> int:
        """The seed call `index`'s inputs are drawn from; a seed issued before and not decided on is void."""
        seed = unpredictable_seed()
        self._issued = (index, seed)
        return seed

    def decide(self, index: int) -> bool:
        """Whether call `index`, which has returned, is rechecked. Only the call issued last is decided, once: a
        second ask, or an ask for a call not issued, is no pick (and a batch that then falls short of its picks
        fails the count in `close_batch`'s caller)."""
        issued, self._issued = self._issued, None
        if self._picks is None or issued is None or issued[0] != index or not self._picks.decide(index):
            return False
        self._picked.append([index, issued[1], None])
        return True

    def hand_in(self, index: int, output: Any) -> bool:
        """The output of the pick made last, taken once; anything else is refused (False)."""
        if not self._picked or self._picked[-1][0] != index or self._picked[-1][2] is not None:
            return False
        self._picked[-1][2] = output
        return True

    def close_batch(self) -> tuple[int, list[Taken]]:
        """The batch's wanted count and the picks whose outputs were handed in; the ledger is empty after."""
        wanted = self._picks.wanted if self._picks is not None else 0
        taken = [Taken(index, seed, output) for index, seed, output in self._picked if output is not None]
        self._picks, self._issued, self._picked = None, None, []
        return wanted, taken

    @property
    def picked(self) -> list[int]:
        """This batch's picks so far, in call order."""
        return [index for index, _, _ in self._picked]

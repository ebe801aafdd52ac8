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

It also keeps the account of each timing phase (`accounts`): every batch it was told of verified, every checked
call asked about. Candidate code could otherwise keep the worker from asking at all, by replacing the object the
worker asks with a stand-in of its own that issues one seed for every call and picks none
(tests/exploits/swaps_recheck_ledger PASSED at 3.3-3.7x with one cached output until 2026-12-03): the judge then
hears of a batch that never ends, or of calls never asked about.
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
        self._count = 0  # this batch's checked calls, as the worker announced them
        self._asked = 0  # of them, the calls decided in order (a seed issued, then its decision asked)
        self._open = False  # a batch was started and not yet closed
        self._closed: list[tuple[int, int, int]] = []  # (batch, calls, calls asked about) since the last account
        self._problems: list[str] = []  # what did not add up since the last account
        self._samples: dict[str, list[float]] = {}  # the phase's timed samples, each as the clock measured it

    def start_batch(self, count: int, wanted: int, classes: int = 0) -> None:
        """A batch of `count` checked calls, `wanted` of them rechecked, one of each of `classes` (graph captures)."""
        if self._open:
            self._problems.append(f"batch {self.batch} was never verified")
        self.batch += 1
        self._picks = OnlinePicks(count, wanted, classes)
        self._issued, self._picked = None, []
        self._count, self._asked, self._open = count, 0, True

    def issue_seed(self, index: int) -> int:
        """The seed call `index`'s inputs are drawn from; a seed issued before and not decided on is void."""
        if not self._open:
            self._problems.append(f"a seed was asked for call {index} outside any batch")
        seed = unpredictable_seed()
        self._issued = (index, seed)
        return seed

    def unchecked_seed(self) -> int:
        """A seed for a call of an implementation nothing rechecks (the baseline), of which no record is kept. Asked
        just before the call, as `issue_seed` is before each checked one, so both sides reach the device after the
        same round trip to the judge (`unchecked_done` is the one after the call)."""
        return unpredictable_seed()

    def unchecked_done(self) -> bool:
        """The round trip after an unchecked call, as `decide` follows each checked one: never a pick."""
        return False

    def decide(self, index: int) -> bool:
        """Whether call `index`, which has returned, is rechecked. Only the call issued last is decided, once: a
        second ask, or an ask for a call not issued, is no pick (and a batch that then falls short of its picks
        fails the count in `close_batch`'s caller)."""
        issued, self._issued = self._issued, None
        if self._picks is None or issued is None or issued[0] != index:
            return False
        self._asked += 1
        if not self._picks.decide(index):
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
        if self._open:
            self._closed.append((self.batch, self._count, self._asked))
        self._picks, self._issued, self._picked, self._open = None, None, [], False
        return wanted, taken

    def record_sample(self, name: str, milliseconds: float) -> None:
        """One timed call's sample, sent the moment the clock measured it, before candidate code runs again."""
        self._samples.setdefault(name, []).append(milliseconds)

    def timing_record(self) -> dict[str, list[float]]:
        """The phase's samples as they were measured, per implementation; the record starts afresh after."""
        record, self._samples = self._samples, {}
        return record

    def accounts(self, checked: bool) -> list[str]:
        """What did not add up in the batches since the last account (a timing phase's): a batch never verified, a
        seed asked for outside a batch and, where the phase timed the checked implementation (`checked`), a batch
        whose calls were not all asked about. Empty when all adds up; the account starts afresh after."""
        problems = list(self._problems)
        if self._open:
            problems.append(f"batch {self.batch} was never verified")
        if checked:
            problems += [f"batch {batch}: {asked} of its {count} timed calls were asked about"
                         for batch, count, asked in self._closed if asked < count]
        self._closed, self._problems = [], []
        self._picks, self._issued, self._picked, self._open = None, None, [], False
        return problems

    @property
    def picked(self) -> list[int]:
        """This batch's picks so far, in call order."""
        return [index for index, _, _ in self._picked]

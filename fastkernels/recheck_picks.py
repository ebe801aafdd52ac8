"""Which timed calls a batch rechecks, decided one call at a time, after each call has returned.

A pick drawn before its call exists while the call runs, and candidate code can read it through the interpreter's
objects and be right exactly on the picked calls without writing anything (tests/exploits/reads_recheck_picks: on
2026-12-02 it passed the harness, whose picks were drawn when a batch started). So nothing about a call's pick exists
until the call has returned: each decision draws fresh OS entropy then.

Selection sampling (Knuth's Algorithm S) keeps a batch's count exact: of `count` calls, exactly `wanted` are picked,
every subset equally likely. With `classes` K (CUDA-graph replays: call i replays capture i mod K), exactly one call
of each class is picked, uniform within its class, and the rest of `wanted` uniform among the calls that are no
class's pick: the same distribution the batch-start draw had.
"""

from __future__ import annotations

import secrets


def _chance(favourable: int, total: int) -> bool:
    """True with probability favourable / total, from fresh OS entropy."""
    return secrets.randbelow(total) < favourable


class OnlinePicks:
    """The picks of one batch of `count` calls of the checked implementation, indices 0, 1, ... in call order."""

    def __init__(self, count: int, wanted: int, classes: int = 0) -> None:
        classes = min(classes, count)
        if not classes <= wanted <= count:
            raise ValueError(f"{wanted} picks of {count} calls with one in each of {classes} classes")
        self.count, self.wanted, self.classes = count, wanted, classes
        self.picked: list[int] = []  # what was decided so far: a record, never a forecast
        self._next = 0
        self._class_left = [len(range(c, count, classes)) for c in range(classes)]  # calls of each class to come
        self._class_open = [True] * classes  # classes still without their pick
        self._extra_left = wanted - classes

    def decide(self, index: int) -> bool:
        """Whether call `index` is rechecked, drawn now. A call out of order (state changed behind the harness's
        back, or a batch not restarted) is never picked: the count of rechecks taken then falls short, which
        TimedRecheck.verify reports."""
        if index != self._next or index >= self.count:
            return False
        self._next += 1
        pick = False
        if self.classes:
            group = index % self.classes
            if self._class_open[group] and _chance(1, self._class_left[group]):
                pick, self._class_open[group] = True, False
            self._class_left[group] -= 1
        if not pick and self._extra_left:
            # the calls from this one on that will be no class's pick: every open class still takes one later call
            rest = (self.count - index) - sum(self._class_open)
            if rest > 0 and _chance(min(self._extra_left, rest), rest):
                pick, self._extra_left = True, self._extra_left - 1
        if pick:
            self.picked.append(index)
        return pick

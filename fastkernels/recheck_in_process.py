"""The judge's recheck requests served in this process, as judge.JudgeClient serves them across a pipe.

For tests, and for diagnosing what the judge's own process costs the timing loop (scripts/judge_paths.py); never
for scoring: candidate code shares this process, and could reach the ledger here (recheck_ledger.py says why the
ledger lives in the judge)."""

from __future__ import annotations

from typing import Any, Callable

import torch

from fastkernels.recheck_ledger import RecheckLedger


class InProcessRecheckJudge:
    """A RecheckLedger behind the judge client's recheck methods. Verdicts come from `judge_fresh` on the inputs
    `rebuild(seed)` makes from each pick's seed. A picked output is copied as it is handed in, as the judge copies
    it (later calls may overwrite the tensor); with `copies=False` it is kept by reference instead and not judged
    (by the batch's end the reference no longer holds that call's output)."""

    def __init__(self, judge_fresh: Callable[[Any, Any], Any], rebuild: Callable[[int], Any] = lambda seed: {},
                 copies: bool = True) -> None:
        self.ledger, self.judge_fresh, self.rebuild, self.copies = RecheckLedger(), judge_fresh, rebuild, copies

    def start_recheck_batch(self, count: int, wanted: int, classes: int) -> None:
        self.ledger.start_batch(count, wanted, classes)

    def issue_seed(self, index: int) -> int:
        return self.ledger.issue_seed(index)

    def unchecked_seed(self) -> int:
        return self.ledger.unchecked_seed()

    def unchecked_done(self) -> bool:
        return self.ledger.unchecked_done()

    def decide(self, index: int) -> bool:
        return self.ledger.decide(index)

    def hand_in(self, index: int, output: Any) -> bool:
        copied = self.copies and isinstance(output, torch.Tensor)
        return self.ledger.hand_in(index, output.clone() if copied else output)

    def verify_rechecks(self) -> tuple[int, int, list[tuple[int, int, Any]]]:
        wanted, taken = self.ledger.close_batch()
        if not self.copies:
            return wanted, len(taken), []
        verdicts = [(pick, self.judge_fresh(self.rebuild(pick.seed), pick.output)) for pick in taken]
        return wanted, len(taken), [(pick.index, pick.seed, v) for pick, v in verdicts if not v.passed]

    def recheck_accounts(self, checked: bool) -> list[str]:
        return self.ledger.accounts(checked)

    def record_sample(self, name: str, milliseconds: float) -> None:
        self.ledger.record_sample(name, milliseconds)

    def timing_record(self) -> dict[str, list[float]]:
        return self.ledger.timing_record()

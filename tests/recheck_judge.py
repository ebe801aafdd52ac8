"""Test helper: the judge's recheck requests served in this process (the real ones cross a pipe to the judge,
judge.JudgeClient), with a stand-in `judge_fresh` judging each handed-in output on inputs rebuilt from its seed."""

from __future__ import annotations

from typing import Any, Callable

import torch

from fastkernels.recheck_ledger import RecheckLedger


class InProcessRecheckJudge:
    def __init__(self, judge_fresh: Callable[[Any, Any], Any], rebuild: Callable[[int], Any] = lambda seed: {}):
        self.ledger, self.judge_fresh, self.rebuild = RecheckLedger(), judge_fresh, rebuild

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
        # copied now, as the judge copies what it is handed: later calls may overwrite the tensor
        return self.ledger.hand_in(index, output.clone() if isinstance(output, torch.Tensor) else output)

    def verify_rechecks(self):
        wanted, taken = self.ledger.close_batch()
        verdicts = [(pick, self.judge_fresh(self.rebuild(pick.seed), pick.output)) for pick in taken]
        return wanted, len(taken), [(pick.index, pick.seed, v) for pick, v in verdicts if not v.passed]

    def recheck_accounts(self, checked: bool) -> list[str]:
        return self.ledger.accounts(checked)

    def record_sample(self, name: str, milliseconds: float) -> None:
        self.ledger.record_sample(name, milliseconds)

    def timing_record(self) -> dict[str, list[float]]:
        return self.ledger.timing_record()

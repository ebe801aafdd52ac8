"""The judge's ledger of timed rechecks (fastkernels/recheck_ledger.py): seeds are issued before a call, picks are
decided after it and answered once, and an output is taken only for the pick made last."""

from __future__ import annotations

from fastkernels.recheck_ledger import RecheckLedger


def test_every_call_gets_its_own_fresh_seed():
    ledger = RecheckLedger()
    ledger.start_batch(8, 0)
    seeds = [ledger.issue_seed(index) for index in range(8)]
    assert len(set(seeds)) == 8 and all(0 <= seed < 2**63 for seed in seeds)


def test_a_pick_is_decided_once_for_the_call_issued_last():
    ledger = RecheckLedger()
    ledger.start_batch(2, 2)
    seed = ledger.issue_seed(0)
    assert ledger.decide(0) and not ledger.decide(0)
    assert ledger.hand_in(0, "out-0") and not ledger.hand_in(0, "again")
    ledger.issue_seed(1)
    ledger.issue_seed(1)  # a second issue replaces the first: only its seed counts
    assert ledger.decide(1)
    assert not ledger.hand_in(0, "late")  # only the pick made last takes an output
    wanted, taken = ledger.close_batch()
    assert wanted == 2 and [(t.index, t.output) for t in taken] == [(0, "out-0")] and taken[0].seed == seed


def test_closing_a_batch_empties_the_ledger():
    ledger = RecheckLedger()
    ledger.start_batch(1, 1)
    ledger.issue_seed(0)
    assert ledger.decide(0) and ledger.hand_in(0, "out")
    assert len(ledger.close_batch()[1]) == 1
    assert ledger.close_batch() == (0, []) and not ledger.decide(0)


def test_a_call_the_clock_times_again_is_judged_on_the_inputs_of_its_last_attempt(monkeypatch):
    # the CUDA-event clock times a late-launched call again, preparing it afresh: a new seed from the judge, and
    # only the attempt that counts is decided on and rechecked
    from types import SimpleNamespace

    import torch
    from fastkernels.recheck_in_process import InProcessRecheckJudge

    from fastkernels import checks
    from fastkernels.checks import TimedRecheck
    from fastkernels.timing import time_interleaved

    filled: list[int] = []  # the seed each attempt's inputs were refilled from
    monkeypatch.setattr(checks, "refill_inputs", lambda manifest, case, inputs, gen: filled.append(gen))
    monkeypatch.setattr(checks, "generator", lambda device, seed: seed)

    class RetryingClock:
        name = "fake"

        def time_call(self, call, prepare=None, key=""):
            for _ in range(2):  # every call launched late once
                if prepare is not None:
                    prepare()
            call()
            return 1.0

    judged: list[int] = []

    def judge_fresh(inputs, output):
        judged.append(inputs)
        return SimpleNamespace(passed=output.item() == inputs, reason="wrong", metrics=None)

    ledger = InProcessRecheckJudge(judge_fresh, rebuild=lambda seed: seed)
    recheck = TimedRecheck(SimpleNamespace(), SimpleNamespace(), "cpu", 4, 4, None, ledger)
    calls = {"candidate": lambda inputs: torch.tensor(filled[-1])}  # right for the inputs it was handed last
    time_interleaved(calls, [{}], RetryingClock(), 0, 4, prepare=recheck.prepare, observe=recheck.observe)
    recheck.verify(judge_fresh, 4)
    assert len(judged) == 4 and judged == filled[1::2]  # each call's second attempt, judged on its own seed


def test_a_phase_whose_batches_were_all_verified_and_whose_calls_were_all_asked_about_adds_up():
    ledger = RecheckLedger()
    for batch in range(2):
        ledger.start_batch(2, 1)
        for index in range(2):
            ledger.issue_seed(index)
            if ledger.decide(index):
                ledger.hand_in(index, "out")
        ledger.close_batch()
    assert ledger.accounts(checked=True) == []


def test_the_account_names_a_batch_never_verified_and_calls_never_asked_about():
    # what a stand-in for the judge in the worker leaves behind: the judge heard of a batch and then of nothing
    ledger = RecheckLedger()
    ledger.start_batch(4, 1)
    ledger.issue_seed(0)
    ledger.decide(0)
    ledger.close_batch()  # verified, but 1 of its 4 calls asked about
    ledger.start_batch(8, 1)  # never verified
    assert ledger.accounts(checked=True) == ["batch 1 was never verified",
                                             "batch 0: 1 of its 4 timed calls were asked about"]
    assert ledger.accounts(checked=True) == []  # each account covers the batches since the last one


def test_a_timing_without_the_checked_implementation_asks_about_no_call_but_must_verify_its_batches():
    ledger = RecheckLedger()
    ledger.start_batch(4, 0)
    ledger.close_batch()
    assert ledger.accounts(checked=False) == []
    ledger.start_batch(4, 0)
    ledger.start_batch(4, 0)  # the first never verified
    ledger.issue_seed(0)
    ledger.close_batch()
    ledger.issue_seed(1)  # no batch open
    assert ledger.accounts(checked=False) == ["batch 1 was never verified",
                                              "a seed was asked for call 1 outside any batch"]

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
    from recheck_judge import InProcessRecheckJudge

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


def _timed_with(candidate, monkeypatch, judge_fresh=None):
    """time_rechecked over a candidate call that may reach the recheck object (`candidate(recheck, inputs)`), on a
    fake clock and the judge's ledger served in this process."""
    from types import SimpleNamespace

    import torch
    from recheck_judge import InProcessRecheckJudge

    from fastkernels import checks
    from fastkernels.checks import TimedRecheck, time_rechecked
    from fastkernels.config import HarnessConfig

    monkeypatch.setattr(checks, "refill_inputs", lambda manifest, case, inputs, gen: None)

    class Clock:
        name = "fake"

        def time_call(self, call, prepare=None, key=""):
            if prepare is not None:
                prepare()
            call()
            return 1.0

    right = SimpleNamespace(passed=True, reason="", metrics=None)
    judge = InProcessRecheckJudge(lambda inputs, output: right)
    harness = HarnessConfig(correctness_rounds=3, warmup=1, iterations=8, max_iterations=8, timeout_s=10,
                            max_rotating_sets=2, tolerance={}, rechecks=2)
    recheck = TimedRecheck(SimpleNamespace(), SimpleNamespace(), "cpu", 8, 2, None, judge)
    calls = {"baseline": lambda inputs: torch.zeros(1), "candidate": lambda inputs: candidate(recheck, inputs)}
    return time_rechecked(calls, [{}], Clock(), recheck, judge_fresh or right, harness, "cpu", 0, 8, "t/c",
                          recheck.prepare,
                          lambda name, index, inputs, output: recheck.observe(name, index, inputs, output))


def test_a_candidate_that_sets_a_stand_in_for_the_judge_is_a_reward_hack(monkeypatch):
    import pytest
    import torch

    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    class StandIn:  # answers every question itself: one seed, no picks, every recheck taken
        def start_recheck_batch(self, *args): pass
        def issue_seed(self, index): return 1
        def decide(self, index): return False
        def hand_in(self, index, output): return True
        def verify_rechecks(self): return 0, 10**6, []
        def recheck_accounts(self, checked): return []

    def candidate(recheck, inputs):
        recheck.ledger = StandIn()
        return torch.zeros(1)

    with pytest.raises(CaseFailure) as failure:
        _timed_with(candidate, monkeypatch)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason == ("the harness's recheck state was changed while the candidate ran: ledger (the"
                                    " judge the rechecks ask)")


def test_a_recheck_method_shadowed_on_the_object_or_a_setting_changed_is_a_reward_hack(monkeypatch):
    import pytest
    import torch

    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    def shadows(recheck, inputs):  # the verification replaced by a method of its own on the instance
        recheck.verify = lambda judge_fresh, expected: None
        return torch.zeros(1)

    def rechecks_the_baseline(recheck, inputs):  # the baseline's calls rechecked instead: they are always right
        recheck.checked = "baseline"
        return torch.zeros(1)

    for candidate, named in ((shadows, "verify (a method) shadowed"),
                             (rechecks_the_baseline, "checked (the implementation rechecked)")):
        with pytest.raises(CaseFailure) as failure:
            _timed_with(candidate, monkeypatch)
        assert failure.value.status is Status.REWARD_HACK
        assert failure.value.reason == f"the harness's recheck state was changed while the candidate ran: {named}"


def test_a_batch_the_worker_was_kept_from_verifying_is_in_the_judges_account(monkeypatch):
    import pytest
    import torch

    from fastkernels.checks import CaseFailure, TimedRecheck
    from fastkernels.records import Status

    def candidate(recheck, inputs):  # the class's verification patched away: the object itself is untouched
        monkeypatch.setattr(TimedRecheck, "verify", lambda self, judge_fresh, expected: None)
        return torch.zeros(1)

    with pytest.raises(CaseFailure) as failure:
        _timed_with(candidate, monkeypatch)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason.startswith("the judge's account of the timed calls does not add up (batch 0 was"
                                           " never verified)")


def test_an_honest_candidate_leaves_an_account_that_adds_up(monkeypatch):
    import torch

    samples, record, _ = _timed_with(lambda recheck, inputs: torch.zeros(1), monkeypatch)
    assert len(samples["candidate"]) == 8 and len(record.rechecked) == 2
    # tuples: candidate code runs again afterwards (graph captures), and lists could be rewritten in place
    assert all(isinstance(values, tuple) for values in samples.values())


def test_a_stand_in_that_passes_every_question_on_is_caught_at_the_next_question_even_when_taken_away_again(
        monkeypatch):
    # a stand-in in place for one call only, forwarding everything to the judge (so the judge's account adds up),
    # put back before the batch ends: the check before each observe finds it
    import pytest
    import torch

    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    calls = []

    class Forwarding:
        def __init__(self, judge):
            self.judge = judge

        def __getattr__(self, name):
            return getattr(self.judge, name)

    def candidate(recheck, inputs):
        calls.append(len(calls))
        if len(calls) == 3:
            recheck.__dict__["real"] = recheck.ledger
            recheck.ledger = Forwarding(recheck.ledger)
        elif len(calls) == 4:
            recheck.ledger = recheck.__dict__.pop("real")
        return torch.zeros(1)

    with pytest.raises(CaseFailure) as failure:
        _timed_with(candidate, monkeypatch)
    assert failure.value.status is Status.REWARD_HACK and len(calls) == 3
    assert failure.value.reason == ("the harness's recheck state was changed while the candidate ran: ledger (the"
                                    " judge the rechecks ask)")


def test_a_batch_whose_picked_outputs_were_never_handed_in_falls_short_of_its_count(monkeypatch):
    import pytest
    import torch

    from fastkernels.checks import CaseFailure, TimedRecheck
    from fastkernels.records import Status

    def candidate(recheck, inputs):  # the class's observe patched away: no call is decided on or handed in
        monkeypatch.setattr(TimedRecheck, "observe", lambda self, name, index, inputs, output: None)
        return torch.zeros(1)

    with pytest.raises(CaseFailure) as failure:
        _timed_with(candidate, monkeypatch)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason == ("0 of the 2 rechecks of timed calls were taken: the harness's recheck state was"
                                    " changed while the candidate ran")


def test_the_second_looks_baseline_or_factor_changed_while_timed_is_a_reward_hack(monkeypatch):
    # BaselineTail lets a miss through where the baseline misses too and the outputs agree within `factor`: with a
    # baseline that always misses and a huge factor, a stale output would pass its second look
    import pytest
    import torch

    from fastkernels.checks import BaselineTail, CaseFailure
    from fastkernels.records import Status

    tail = BaselineTail(lambda inputs, output: None, lambda **inputs: torch.zeros(1), "native", 3.0)

    def candidate(recheck, inputs):
        tail.factor = 1e12
        return torch.zeros(1)

    with pytest.raises(CaseFailure) as failure:
        _timed_with(candidate, monkeypatch, judge_fresh=tail)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason == "the harness's fresh-input judge was changed while the candidate ran: factor"

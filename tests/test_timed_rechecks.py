"""checks.time_rechecked against candidate code that reaches the harness's recheck state from inside a timed call:
what the recheck object and the fresh-input judge were set up with stays pinned for the phase, the judge keeps its
own account of it, and the samples returned are the judge's record of what the clock measured."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from fastkernels.recheck_in_process import InProcessRecheckJudge

from fastkernels import checks
from fastkernels.checks import BaselineTail, CaseFailure, TimedRecheck, time_rechecked
from fastkernels.config import HarnessConfig
from fastkernels.records import Status

RIGHT = SimpleNamespace(passed=True, reason="", metrics=None)
CHANGED = "the harness's recheck state was changed while the candidate ran: "


class Clock:
    name = "fake"

    def time_call(self, call, prepare=None, key=""):
        if prepare is not None:
            prepare()
        call()
        return 1.0


def timed_with(candidate, monkeypatch, judge_fresh=None):
    """time_rechecked over a candidate call that may reach the recheck object (`candidate(recheck, inputs)`): 8
    iterations, 2 rechecks, a fake clock and the judge's ledger served in this process."""
    monkeypatch.setattr(checks, "refill_inputs", lambda manifest, case, inputs, gen: None)
    judge = InProcessRecheckJudge(lambda inputs, output: RIGHT)
    harness = HarnessConfig(correctness_rounds=3, warmup=1, iterations=8, max_iterations=8, timeout_s=10,
                            max_rotating_sets=2, tolerance={}, rechecks=2)
    recheck = TimedRecheck(SimpleNamespace(), SimpleNamespace(), "cpu", 8, 2, None, judge)
    calls = {"baseline": lambda inputs: torch.zeros(1), "candidate": lambda inputs: candidate(recheck, inputs)}
    return time_rechecked(calls, [{}], Clock(), recheck, judge_fresh or RIGHT, harness, "cpu", 0, 8, "t/c",
                          recheck.prepare,
                          lambda name, index, inputs, output: recheck.observe(name, index, inputs, output))


def reward_hack(candidate, monkeypatch, judge_fresh=None) -> str:
    """The reason of the REWARD_HACK that timing `candidate` must end in."""
    with pytest.raises(CaseFailure) as failure:
        timed_with(candidate, monkeypatch, judge_fresh)
    assert failure.value.status is Status.REWARD_HACK
    return failure.value.reason


def test_an_honest_candidate_leaves_an_account_that_adds_up(monkeypatch):
    samples, record, _ = timed_with(lambda recheck, inputs: torch.zeros(1), monkeypatch)
    assert len(samples["candidate"]) == 8 and len(record.rechecked) == 2
    # tuples: candidate code runs again afterwards (graph captures), and lists could be rewritten in place
    assert all(isinstance(values, tuple) for values in samples.values())


def test_both_sides_make_the_same_round_trips_to_the_judge_around_every_timed_call(monkeypatch):
    # the checked side's calls are asked about before (their seed) and after (the pick); the other side's calls make
    # the same two trips, so both reach the device after the same host path
    trips: list[tuple[str, str]] = []  # (which call the clock times next, the request)
    timing: list[str] = []

    class Counted(InProcessRecheckJudge):
        pass

    for request in ("issue_seed", "unchecked_seed", "decide", "unchecked_done"):
        def counted(self, *args, _request=request):
            trips.append((timing[-1], _request))
            return getattr(InProcessRecheckJudge, _request)(self, *args)
        setattr(Counted, request, counted)

    monkeypatch.setattr(checks, "refill_inputs", lambda manifest, case, inputs, gen: None)
    judge = Counted(lambda inputs, output: RIGHT)
    harness = HarnessConfig(correctness_rounds=3, warmup=1, iterations=8, max_iterations=8, timeout_s=10,
                            max_rotating_sets=2, tolerance={}, rechecks=2)
    recheck = TimedRecheck(SimpleNamespace(), SimpleNamespace(), "cpu", 8, 2, None, judge)

    def side(name):  # the call, marking whose round trips come next
        def call(inputs):
            timing.append(name)
            return torch.zeros(1)
        return call

    def prepare(name, index, inputs):  # marking whose round trips these are
        timing.append(name)
        recheck.prepare(name, index, inputs)

    time_rechecked({"baseline": side("baseline"), "candidate": side("candidate")}, [{}], Clock(), recheck, RIGHT,
                   harness, "cpu", 0, 8, "t/c", prepare, recheck.observe)
    before = {name: [r for n, r in trips if n == name and r.endswith("seed")] for name in ("baseline", "candidate")}
    after = {name: [r for n, r in trips if n == name and not r.endswith("seed")] for name in ("baseline", "candidate")}
    assert before == {"baseline": ["unchecked_seed"] * 8, "candidate": ["issue_seed"] * 8}
    assert after == {"baseline": ["unchecked_done"] * 8, "candidate": ["decide"] * 8}


def test_a_candidate_that_sets_a_stand_in_for_the_judge_is_a_reward_hack(monkeypatch):
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

    assert reward_hack(candidate, monkeypatch) == CHANGED + "ledger (the judge the rechecks ask)"


def test_a_stand_in_that_passes_every_question_on_is_caught_at_the_next_question_even_when_taken_away_again(
        monkeypatch):
    # a stand-in in place for one call only, forwarding everything to the judge (so the judge's account adds up),
    # put back before the batch ends: the check before each observe finds it
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

    assert reward_hack(candidate, monkeypatch) == CHANGED + "ledger (the judge the rechecks ask)"
    assert len(calls) == 3


def test_a_recheck_method_shadowed_on_the_object_or_a_setting_changed_is_a_reward_hack(monkeypatch):
    def shadows(recheck, inputs):  # the verification replaced by a method of its own on the instance
        recheck.verify = lambda judge_fresh, expected: None
        return torch.zeros(1)

    def rechecks_the_baseline(recheck, inputs):  # the baseline's calls rechecked instead: they are always right
        recheck.checked = "baseline"
        return torch.zeros(1)

    assert reward_hack(shadows, monkeypatch) == CHANGED + "verify (a method) shadowed"
    assert reward_hack(rechecks_the_baseline, monkeypatch) == CHANGED + "checked (the implementation rechecked)"


def test_a_batch_the_worker_was_kept_from_verifying_is_in_the_judges_account(monkeypatch):
    def candidate(recheck, inputs):  # the class's verification patched away: the object itself is untouched
        monkeypatch.setattr(TimedRecheck, "verify", lambda self, judge_fresh, expected: None)
        return torch.zeros(1)

    assert reward_hack(candidate, monkeypatch).startswith(
        "the judge's account of the timed calls does not add up (batch 0 was never verified)")


def test_a_batch_whose_picked_outputs_were_never_handed_in_falls_short_of_its_count(monkeypatch):
    def candidate(recheck, inputs):  # the class's observe patched away: no call is decided on or handed in
        monkeypatch.setattr(TimedRecheck, "observe", lambda self, name, index, inputs, output: None)
        return torch.zeros(1)

    assert reward_hack(candidate, monkeypatch) == ("0 of the 2 rechecks of timed calls were taken: the harness's"
                                                   " recheck state was changed while the candidate ran")


def test_the_second_looks_baseline_or_factor_changed_while_timed_is_a_reward_hack(monkeypatch):
    # BaselineTail lets a miss through where the baseline misses too and the outputs agree within `factor`: with a
    # baseline that always misses and a huge factor, a stale output would pass its second look
    tail = BaselineTail(lambda inputs, output: None, lambda **inputs: torch.zeros(1), "native", 3.0)

    def candidate(recheck, inputs):
        tail.factor = 1e12
        return torch.zeros(1)

    assert reward_hack(candidate, monkeypatch, judge_fresh=tail) == (
        "the harness's fresh-input judge was changed while the candidate ran: factor")


def test_samples_rewritten_after_they_were_measured_are_a_reward_hack(monkeypatch):
    # the lists time_interleaved returns are the harness's; the judge's record was sent as each sample was taken
    real = checks.time_interleaved

    def rewriting(*args, **kwargs):
        samples = real(*args, **kwargs)
        samples["candidate"][:] = [value / 10 for value in samples["candidate"]]
        return samples

    monkeypatch.setattr(checks, "time_interleaved", rewriting)
    assert reward_hack(lambda recheck, inputs: torch.zeros(1), monkeypatch).startswith(
        "the timing samples differ from what the clock measured")


class LaggingClock(Clock):
    """A fake CUDA clock that leaves each call's CallCheck: the baseline's calls lag 18 us after the timed stream,
    the candidate's n-th call `candidate_lag(n)` ms; candidate call n measures n ms, so samples name their calls."""

    def __init__(self, candidate_lag):
        self.candidate_lag, self.current, self.count, self.last_check = candidate_lag, "", 0, None

    def time_call(self, call, prepare=None, key=""):
        from fastkernels.timing import CallCheck

        super().time_call(call, prepare, key)
        if self.current != "candidate":
            self.last_check = CallCheck(0.341, 0.5, 0.018)
            return 1.0
        self.count += 1
        self.last_check = CallCheck(0.341, 0.5, self.candidate_lag(self.count))
        return float(self.count)


def timed_with_lags(candidate_lag, monkeypatch):
    """time_rechecked as the harness runs it with the stream-escape check: 8 iterations, then the verdict."""
    from fastkernels.stream_escape import StreamEscape, verify_escape

    monkeypatch.setattr(checks, "refill_inputs", lambda manifest, case, inputs, gen: None)
    judge = InProcessRecheckJudge(lambda inputs, output: RIGHT)
    harness = HarnessConfig(correctness_rounds=3, warmup=1, iterations=8, max_iterations=8, timeout_s=10,
                            max_rotating_sets=2, tolerance={}, rechecks=2)
    recheck = TimedRecheck(SimpleNamespace(), SimpleNamespace(), "cpu", 8, 2, None, judge)
    clock = LaggingClock(candidate_lag)
    escape = StreamEscape(clock)

    def side(name):
        def call(inputs):
            clock.current = name
            return torch.zeros(1)
        return call

    def observe(name, index, inputs, output):
        recheck.observe(name, index, inputs, output)
        escape.observe(name, index, inputs, output)

    samples, record, _ = time_rechecked(
        {"baseline": side("baseline"), "candidate": side("candidate")}, [{}], clock, recheck, RIGHT, harness, "cpu",
        0, 8, "t/c", recheck.prepare, observe, lambda: escape.start_confirmation(side_streams_allowed=False))
    verify_escape(escape, False, clock, len(samples["candidate"]))
    return samples, record, escape


def test_calls_that_lagged_by_chance_are_set_aside_and_the_row_is_timed_on_a_fresh_batch(monkeypatch):
    # the first 8 candidate calls lag 45 us (a GPU shared with other runs, or work hidden only until a confirmation):
    # the row is timed and judged on 20 fresh calls alone
    samples, record, escape = timed_with_lags(lambda n: 0.045 if n <= 8 else 0.018, monkeypatch)
    assert samples["candidate"] == tuple(float(n) for n in range(9, 29))
    assert len(samples["baseline"]) == 20 and len(record.first) == 20 and len(record.candidate_ms) == 20
    assert all(0 <= index < 20 for index in record.rechecked) and record.rechecked
    assert [len(calls["candidate"]) for calls in escape.set_aside] == [8]
    assert escape.note() == ("stream escape: the lags of the first 8 candidate calls suggested work off the timed"
                             " stream; a fresh batch of 20 did not confirm it and gave the times")


def test_work_hidden_in_every_call_is_convicted_on_the_fresh_batch(monkeypatch):
    with pytest.raises(CaseFailure) as failure:
        timed_with_lags(lambda n: 0.5, monkeypatch)
    assert failure.value.status is Status.REWARD_HACK
    assert "in 40% of 20 timed calls the device stayed busy 0.500 ms" in failure.value.reason


def test_calls_that_never_lagged_are_timed_once(monkeypatch):
    samples, record, escape = timed_with_lags(lambda n: 0.018, monkeypatch)
    assert samples["candidate"] == tuple(float(n) for n in range(1, 9)) and escape.set_aside == []
    assert escape.note() == ""  # nothing set aside: nothing for review

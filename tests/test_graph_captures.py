"""graphs.py captures every implementation several times, because a CUDA graph's replay speed is drawn when it is
captured (H200, 2026-11-30): the captures interleave between sides, shrink to fit memory, and a module that refuses
any capture is reported not capturable rather than timed on a partial set; the timed replays rotate over the
captures across adaptive batches, every candidate capture is judged on a timed replay, timed candidate replays are
rechecked in every batch, work left running after a replay's stream is caught, and the interval resamples captures.
CUDA itself is faked here; tests/gpu captures real graphs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import torch

from fastkernels import graphs
from fastkernels.recheck_in_process import InProcessRecheckJudge


@pytest.fixture
def fake_cuda(monkeypatch):
    state = {"reserved": 0, "free": 80 << 30, "log": []}
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda: state["reserved"])
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (state["free"], 141 << 30))
    return state


def fake_capture(state, per_capture: int, refuse: dict[str, int] | None = None):
    counts: dict[str, int] = {}

    def capture(module, static):
        name = module.__name__
        counts[name] = counts.get(name, 0) + 1
        state["log"].append(f"{name}{counts[name] - 1}")
        if refuse and counts[name] > refuse.get(name, 10**9):
            return f"{name} refused capture {counts[name] - 1}"
        state["reserved"] += per_capture
        return graphs.Captured(graph=None, inputs=static, output=None)
    return capture


def baseline(**_):
    return None


def candidate(**_):
    return None


def named(name):
    """A module the fake capture knows by `name` (an instance of one side)."""
    def module(**_):
        return None
    module.__name__ = name
    return module


def test_captures_alternate_between_sides_and_which_goes_first_turns_every_round(monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=4)
    assert fake_cuda["log"] == ["baseline0", "candidate0", "candidate1", "baseline1", "baseline2", "candidate2",
                                "candidate3", "baseline3"]
    assert len(captures["baseline"]) == len(captures["candidate"]) == 4 and notes == []


def test_a_side_of_several_instances_captures_them_in_turn(monkeypatch, fake_cuda):
    # harness.instances: where a module's weights land is part of its speed, so the captures rotate over instances
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20))
    sides = {"baseline": [named("b_one"), named("b_two")], "candidate": [named("c_one"), named("c_two")]}
    captures, _ = graphs._capture_all(sides, {}, wanted=4)
    assert fake_cuda["log"] == ["b_one0", "c_one0", "c_two0", "b_two0", "b_one1", "c_one1", "c_two1", "b_two1"]
    assert len(captures["baseline"]) == len(captures["candidate"]) == 4


def test_large_captures_are_fewer_so_that_they_take_at_most_a_quarter_of_free_memory(monkeypatch, fake_cuda):
    fake_cuda["free"] = 40 << 30
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=2 << 30))  # 4 GiB a round
    captures, _ = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=8)
    assert len(captures["baseline"]) == len(captures["candidate"]) == 1 + (10 << 30) // (4 << 30)


def test_one_capture_a_side_even_when_memory_is_short(monkeypatch, fake_cuda):
    fake_cuda["free"] = 1 << 30
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=4 << 30))
    captures, _ = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=8)
    assert len(captures["baseline"]) == len(captures["candidate"]) == 1


def test_a_candidate_that_refuses_a_later_capture_is_not_capturable_and_the_baseline_is_timed_alone(
        monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20, refuse={"candidate": 2}))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=4)
    assert set(captures) == {"baseline"} and len(captures["baseline"]) == 4
    assert notes == ["candidate not capturable: candidate refused capture 2"]
    assert "candidate3" not in fake_cuda["log"]  # no more attempts once it refused


def test_an_uncapturable_baseline_leaves_nothing_to_time(monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20, refuse={"baseline": 0}))
    captures, notes = graphs._capture_all({"baseline": baseline, "candidate": candidate}, {}, wanted=3)
    assert captures == {} and notes[0].startswith("baseline not capturable")


class FakeGraph:
    """A capture's replay. With `output` (a tensor), it writes 1 there, the right answer, on its first replay; a
    `skips_after_first` graph then keeps a device-side count and leaves -1 (a wrong answer) on every later one; a
    `wrong` graph leaves -1 on every replay."""

    def __init__(self, side: str, index: int, replayed: list[tuple[str, int]], clock: "CaptureClock",
                 output: torch.Tensor | None = None, skips_after_first: bool = False, wrong: bool = False) -> None:
        self.side, self.index, self.replayed, self.clock = side, index, replayed, clock
        self.output, self.skips_after_first, self.wrong, self.replays = output, skips_after_first, wrong, 0

    def replay(self) -> None:
        self.replayed.append((self.side, self.index))
        self.clock.last = (self.side, self.index)
        if self.output is not None:
            self.output.fill_(-1.0 if self.wrong or (self.skips_after_first and self.replays) else 1.0)
        self.replays += 1


class CaptureClock:
    """Each replay takes its capture's speed: 1 ms, and 1.05 ms for the baseline's capture 0 (a slow draw). With
    `candidate_lag_ms`, every candidate replay leaves the device busy that long after its stream finished (work on a
    stream the events do not see), baseline replays 0.01 ms (host noise); a list gives the candidate's replays their
    lags in turn, 0.01 ms once it runs out."""

    name = "fake"

    def __init__(self, candidate_lag_ms: float | list[float] | None = None, slow_ms: float = 1.05) -> None:
        self.last = ("", -1)
        self.candidate_replays = 0
        self.slow_ms = slow_ms
        self.candidate_lag_ms = candidate_lag_ms
        self.last_check = None

    def time_call(self, call, prepare=None, key="") -> float:
        from fastkernels.timing import CallCheck

        if prepare is not None:
            prepare()
        call()
        event_ms = self.slow_ms if self.last == ("baseline", 0) else 1.0
        if self.candidate_lag_ms is not None:
            lag = 0.01
            if self.last[0] == "candidate":
                lags = self.candidate_lag_ms
                index, self.candidate_replays = self.candidate_replays, self.candidate_replays + 1
                lag = lags if not isinstance(lags, list) else lags[index] if index < len(lags) else 0.01
            self.last_check = CallCheck(event_ms, event_ms + lag + 0.01, lag)
        return event_ms


def graph_run(monkeypatch, fake_cuda, wanted: int, iterations: int, max_iterations: int, modules=None, fallbacks=(),
              refuse=(), rechecks=0, skips_after_first=False, candidate_lag_ms=None, allow=(), keep_call_times=False,
              wrong_capture=None, captures_max=None, slow_ms=1.05, max_timing_s=1e9, candidate_refuses_after=None):
    from types import SimpleNamespace

    from fastkernels import checks

    replayed: list[tuple[str, int]] = []
    judged: list[int] = []
    clock = CaptureClock(candidate_lag_ms, slow_ms)
    made: dict[str, int] = {}

    def capture(module, static):
        side = module.__name__
        if side in refuse:
            return f"{side} synchronised with the host"
        if side == "candidate" and candidate_refuses_after is not None and made.get(side, 0) >= candidate_refuses_after:
            return "candidate allocated during capture"
        made[side] = made.get(side, 0) + 1
        output = torch.zeros(1) if side == "candidate" else None
        graph = FakeGraph(side, made[side] - 1, replayed, clock, output, skips_after_first and side == "candidate",
                          wrong=side == "candidate" and made[side] - 1 == wrong_capture)
        return graphs.Captured(graph=graph, inputs=static, output=side if output is None else output)

    def judge(given, output):
        judged.append(len(judged))
        passed = not (isinstance(output, torch.Tensor) and output.item() != 1.0)
        return SimpleNamespace(passed=passed, reason="" if passed else "3 of 8 elements wrong", metrics=None)

    monkeypatch.setattr(graphs, "capture", capture)
    monkeypatch.setattr(checks, "refill_inputs", lambda *args: None)
    monkeypatch.setattr(checks, "redrawn_inputs", lambda manifest, case, like, gen: dict(like))
    monkeypatch.setattr(checks, "generator", lambda device, seed: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    repetition = SimpleNamespace(graph_captures=wanted, graph_captures_max=captures_max or wanted, target_ci=1e-9,
                                 iteration_cap=lambda device: max_iterations, max_timing_s=max_timing_s,
                                 rechecks=rechecks, keep_call_times=keep_call_times, seed=0)
    fields = graphs.graph_fields(SimpleNamespace(name="t", allow=list(allow)), SimpleNamespace(name="c"),
                                 modules or {"baseline": baseline, "candidate": candidate}, {}, judge,
                                 InProcessRecheckJudge(judge), clock, None,
                                 warmup=0, iterations=iterations, repetition=repetition,
                                 baseline_name="liger", fallbacks=fallbacks)
    return fields, replayed, judged


def test_timed_replays_rotate_over_every_capture_across_adaptive_batches(monkeypatch, fake_cuda):
    # 6 iterations, then batches of 6 and 12 (doubling to 24): the rotation continues where each batch stopped.
    fields, replayed, judged = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=24)
    assert judged == [0, 1, 2, 3]  # one timed replay of every candidate capture, in the first batch
    timed = replayed  # no untimed replays: the captures are judged on timed ones
    baseline_captures = [index for side, index in timed if side == "baseline"]
    assert baseline_captures == [i % 4 for i in range(24)]
    assert [index for side, index in timed if side == "candidate"] == baseline_captures  # pairs share the index
    assert fields["graph_captures"] == 4


def test_kept_replay_times_say_which_side_went_first_which_replays_were_rechecked_and_how_many_captures(
        monkeypatch, fake_cuda):
    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=12, rechecks=2,
                                    keep_call_times=True)
    kept = fields["graph_call_times"]
    assert len(kept.baseline_ms) == len(kept.candidate_ms) == len(kept.first) == 12 and kept.input_sets == 4
    assert kept.baseline_ms[0] == 1.05 and kept.baseline_ms[4] == 1.05  # capture 0, the slow draw, every 4th
    assert kept.first == [replayed[2 * i][0] for i in range(12)]
    # the first batch rechecks one replay of each of the 4 captures (more than the 2 rechecks), the second 2
    assert len(kept.rechecked) == 6 and {i % 4 for i in kept.rechecked[:4]} == {0, 1, 2, 3}
    assert all(0 <= i < 6 for i in kept.rechecked[:4])
    assert all(6 <= i < 12 for i in kept.rechecked[4:])  # the second batch's picks, counted from its start
    fields, _, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=12)
    assert "graph_call_times" not in fields


def test_one_slow_capture_moves_the_speedup_a_quarter_as_much_and_the_interval_shows_the_draw(monkeypatch, fake_cuda):
    fields, _, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=400, max_iterations=400)
    # 100 of 400 ratios read 1.05: exactly the top quarter, which the interquartile mean drops.
    assert fields["graph_speedup"] == pytest.approx(1.0)
    low, high = fields["graph_speedup_ci95"]
    assert low <= 1.0 and high == pytest.approx(1.05, rel=1e-3)  # resampling captures can draw the slow one twice


def test_an_interval_still_wide_raises_the_captures_to_the_maximum_and_times_them_all_afresh(monkeypatch, fake_cuda):
    # one slow baseline capture keeps the interval far wider than the target (resampling can draw it twice), so the
    # 4 captures a side go straight to the 16 allowed: one more round, over all 16
    fields, replayed, judged = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=32, max_iterations=32,
                                         captures_max=16)
    assert fields["graph_captures"] == 16
    last = replayed[-64:]
    assert [index for side, index in last if side == "baseline"] == [i % 16 for i in range(32)]
    assert [index for side, index in last if side == "candidate"] == [i % 16 for i in range(32)]
    assert len(replayed) == 2 * 64
    assert len(judged) == 4 + 16  # each round's first batch judges a timed replay of every capture it rotates over
    low, high = fields["graph_speedup_ci95"]
    assert low <= fields["graph_speedup"] <= high


@pytest.mark.parametrize("count, wider, most, wanted", [
    (8, 0.028, 32, 32),  # (2.8)^2 x 8 = 63 asks for 64: the maximum
    (8, 0.011, 32, 16),  # 1.21 x 8 = 9.7: one doubling is enough
    (8, 0.0105, 64, 16),
    (16, 0.015, 32, 32),
    (8, 0.05, 20, 16),  # a maximum that is no power-of-two multiple: the last doubling under it
    (32, 0.05, 32, 32),  # at the maximum: no more
    (16, 0.05, 20, 16),  # twice as many would pass the maximum: no more
])
def test_the_next_round_asks_for_as_many_doublings_as_the_intervals_width(count, wider, most, wanted):
    from types import SimpleNamespace

    repetition = SimpleNamespace(target_ci=0.01, graph_captures_max=most)
    assert graphs._captures_wanted(count, wider, repetition) == wanted


def test_the_added_captures_continue_the_interleaving_and_the_instance_rotation(monkeypatch, fake_cuda):
    monkeypatch.setattr(graphs, "capture", fake_capture(fake_cuda, per_capture=1 << 20))
    sides = {"baseline": [named("b_one"), named("b_two"), named("b_three")],
             "candidate": [named("c_one"), named("c_two"), named("c_three")]}
    graphs._capture_all(sides, {}, wanted=2)
    fake_cuda["log"].clear()
    more, notes = graphs._capture_all(sides, {}, wanted=4, start=2)
    assert fake_cuda["log"] == ["b_three0", "c_three0", "c_one1", "b_one1"] and notes == []
    assert len(more["baseline"]) == len(more["candidate"]) == 2


def test_a_tight_interval_keeps_the_captures_it_started_with(monkeypatch, fake_cuda):
    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=32, max_iterations=32,
                                    captures_max=32, slow_ms=1.0)
    assert fields["graph_captures"] == 4 and len(replayed) == 64
    assert fields["graph_speedup_ci95"] == (pytest.approx(1.0), pytest.approx(1.0))


def test_no_doubling_where_another_round_of_replays_would_pass_the_time_cap(monkeypatch, fake_cuda):
    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=32, max_iterations=32,
                                    captures_max=32, max_timing_s=1e-6)
    assert fields["graph_captures"] == 4


def test_a_candidate_that_refuses_more_captures_is_reported_on_the_ones_it_was_timed_on(monkeypatch, fake_cuda):
    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=32, max_iterations=32,
                                    captures_max=16, candidate_refuses_after=4)
    assert fields["graph_captures"] == 4 and fields["graph_speedup"] == pytest.approx(1.0)
    assert len(replayed) == 64  # one round: the refused doubling timed nothing more


def test_a_maximum_below_the_starting_captures_is_refused_with_both_keys_named():
    from pydantic import ValidationError

    from fastkernels.config import HarnessConfig

    with pytest.raises(ValidationError, match=r"graph_captures_max \(4\) must be at least graph_captures \(8\)"):
        HarnessConfig(correctness_rounds=3, warmup=1, iterations=8, timeout_s=10, max_rotating_sets=2, tolerance={},
                      graph_captures=8, graph_captures_max=4)


def test_a_later_capture_of_the_candidate_wrong_on_every_replay_is_a_reward_hack_that_names_it(
        monkeypatch, fake_cuda):
    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    for _ in range(5):  # whichever of its replays the picks take, with no extra batch and no rechecks asked
        with pytest.raises(CaseFailure) as failure:
            graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=6, wrong_capture=2)
        assert failure.value.status is Status.REWARD_HACK
        assert failure.value.reason.startswith("under CUDA graph replay: timed call ")
        assert "(capture 2) returned a wrong output" in failure.value.reason


def test_timed_replays_are_rechecked_in_every_batch(monkeypatch, fake_cuda):
    # 6 iterations, then batches of 6 and 12: 2 rechecks each (3 pairs of iterations allow up to 3)
    _, _, judged = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=24, rechecks=2)
    assert len(judged) == 4 + 2 * 2  # one timed replay of each of the four captures, then two of each extra batch


def test_a_capture_right_on_its_first_replay_and_stale_after_is_a_reward_hack(monkeypatch, fake_cuda):
    # its device-side count lets the first replay (the capture's check) compute and every later one skip
    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    with pytest.raises(CaseFailure) as failure:
        graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=24, rechecks=2,
                  skips_after_first=True)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason.startswith("under CUDA graph replay: timed call ")
    assert "returned a wrong output though the checked calls were right" in failure.value.reason


def test_work_left_running_after_the_candidates_replays_is_a_reward_hack(monkeypatch, fake_cuda):
    from fastkernels.checks import CaseFailure
    from fastkernels.records import Status

    with pytest.raises(CaseFailure) as failure:
        graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=6, candidate_lag_ms=0.5)
    assert failure.value.status is Status.REWARD_HACK
    assert failure.value.reason.startswith("under CUDA graph replay: work kept the device busy after the timed stream")


def test_a_lag_in_one_of_a_handful_of_replays_is_weighed_on_fresh_replays_before_any_verdict(monkeypatch, fake_cuda):
    # 4 timed replays a side, 2 of the candidate's lagging (one host hiccup can do that): the 60th percentile of 4
    # says "escaped work"; a fresh batch of 20 replays a side shows none, and the row passes on those alone
    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=4, max_iterations=4,
                                    candidate_lag_ms=[0.01, 0.5, 0.5, 0.01], keep_call_times=True)
    assert len(replayed) == 2 * (4 + 20) and fields["graph_sync_lag_ms"] == pytest.approx((0.01, 0.01))
    assert len(fields["graph_call_times"].candidate_ms) == 20
    assert fields["graph_note"] == ("stream escape: the lags of the first 4 candidate calls suggested work off the"
                                    " timed stream; a fresh batch of 20 did not confirm it and gave the times")


def test_honest_replays_record_their_lags_and_a_task_may_allow_side_streams(monkeypatch, fake_cuda):
    fields, _, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=6, candidate_lag_ms=0.012)
    assert fields["graph_sync_lag_ms"] == pytest.approx((0.01, 0.012))  # within the 0.02 ms margin
    fields, _, _ = graph_run(monkeypatch, fake_cuda, wanted=4, iterations=6, max_iterations=6, candidate_lag_ms=0.5,
                             allow=["side_streams"])
    assert fields["graph_sync_lag_ms"] == pytest.approx((0.01, 0.5))


def test_an_uncapturable_baseline_gives_way_to_the_next_production_implementation_that_captures(
        monkeypatch, fake_cuda):
    # production replays graphs only of what captures: Liger's MoE syncs with the host, grouped_mm captures
    def liger(**_):
        return None

    def baseline(**_):  # grouped_mm's stand-in: the fake capture names a side by its function's name
        return None

    fields, replayed, _ = graph_run(monkeypatch, fake_cuda, wanted=2, iterations=6, max_iterations=6,
                                    modules={"baseline": liger, "candidate": candidate},
                                    fallbacks=[("grouped_mm", baseline)], refuse={"liger"})
    assert fields["graph_baseline_impl"] == "grouped_mm"
    assert fields["graph_note"] == "baseline liger not capturable: liger synchronised with the host"
    assert fields["graph_speedup"] == pytest.approx(1.0, rel=0.06)


def test_without_a_capturable_production_implementation_the_row_says_which_could_not(monkeypatch, fake_cuda):
    def liger(**_):
        return None

    fields, _, _ = graph_run(monkeypatch, fake_cuda, wanted=2, iterations=6, max_iterations=6,
                             modules={"baseline": liger, "candidate": candidate}, refuse={"liger"})
    assert fields == {"graph_note": "baseline liger not capturable: liger synchronised with the host"}


@given(captures=st.integers(1, 12), iterations=st.integers(1, 80), rechecks=st.integers(0, 10))
@settings(max_examples=60, deadline=None)
def test_the_first_batch_picks_a_replay_of_every_capture_and_later_batches_pick_rechecks_at_random(
        captures, iterations, rechecks):
    from fastkernels.checks import recheck_count
    from fastkernels.recheck_ledger import RecheckLedger
    from fastkernels.timing import paired_count

    ledger = RecheckLedger()  # the judge's: it issues each call's seed and decides after the call
    count = paired_count(iterations)

    def run_batch() -> set[int]:
        """A batch's calls of the checked implementation, in order: each pick is decided after its call."""
        for index in range(count):
            assert len(ledger.picked) <= index  # nothing about a call is decided before it has run
            ledger.issue_seed(index)
            if ledger.decide(index):
                assert ledger.hand_in(index, torch.zeros(1))
        return set(ledger.picked)

    ledger.start_batch(count, recheck_count(rechecks, iterations, min(captures, count)), min(captures, count))
    picked = run_batch()
    assert len(picked) == recheck_count(rechecks, iterations, captures) == min(max(rechecks, captures), count)
    assert all(0 <= i < count for i in picked)
    assert {i % captures for i in picked} == set(range(min(captures, count)))
    wanted, taken = ledger.close_batch()
    assert wanted == len(taken) == len(picked)
    ledger.start_batch(count, recheck_count(rechecks, iterations), 0)
    assert len(run_batch()) == recheck_count(rechecks, iterations) == min(rechecks, count)
"""The timing protocol, checked against a fake clock: what is timed, in what order, on which inputs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastkernels.timing import (
    ALTERNATE, HostClock, continuing, extend_until_tight, paired_speedup, speedup_ci95, summarize, time_interleaved,
)


class FakeClock:
    """Each timed call takes the duration its implementation declares; records what happened inside intervals."""

    name = "fake"

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.open = False
        self.duration = 1.0

    def time_call(self, call, prepare=None, key="") -> float:
        if prepare is not None:
            prepare()
        self.open = True
        self.log.append("start")
        call()
        self.log.append("stop")
        self.open = False
        return self.duration


def test_warmup_is_untimed_then_calls_alternate_order_on_rotated_sets():
    # ALTERNATE fixes each pair's first order (the harness draws it) so the sequence can be spelled out
    log: list[str] = []
    clock = FakeClock(log)
    seen: list[tuple[str, int]] = []

    def impl(name: str, ms: float):
        def call(inputs: int) -> None:
            seen.append((name, inputs))
            log.append(f"{name}{inputs}")
            clock.duration = ms
        return call

    def flush() -> None:
        assert not clock.open, "the cache flush must happen outside the timed interval"
        log.append("flush")

    samples = time_interleaved({"a": impl("a", 2.0), "b": impl("b", 1.0)}, [0, 1, 2], clock, warmup=2, iterations=4,
                               prepare=lambda name, index, inputs: flush(), order_rng=ALTERNATE)
    assert samples == {"a": [2.0] * 4, "b": [1.0] * 4}
    assert seen[:4] == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]  # warm-up: through the clock (its launch pad
    assert log[:12] == ["start", "a0", "stop", "start", "b0", "stop",  # settles), unflushed, its times dropped
                        "start", "a1", "stop", "start", "b1", "stop"]
    timed = seen[4:]
    assert timed == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2), ("b", 0), ("a", 0)]
    assert log[12:17] == ["flush", "start", "a0", "stop", "flush"]


def test_every_timed_call_is_preceded_by_a_flush():
    log: list[str] = []
    time_interleaved({"x": lambda s: 1.0}, [None], FakeClock(log), warmup=1, iterations=6,
                     prepare=lambda name, index, inputs: log.append("flush"))
    timed = [event for event in log if event in ("flush", "start")]
    assert timed == ["start"] + ["flush", "start"] * 6  # the warm-up call first, unflushed


def test_summary_reports_median_and_relative_interquartile_spread():
    summary = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert summary.median_ms == 3.0 and summary.spread == (4.0 - 2.0) / 3.0


def test_bootstrap_interval_brackets_the_true_ratio():
    low, high = speedup_ci95([2.0, 2.1, 1.9, 2.0, 2.05] * 4, [1.0, 1.02, 0.98, 1.0, 1.01] * 4)
    assert low <= 2.0 <= high and high - low < 0.3


def test_speedup_averages_paired_ratios_so_shared_drift_cancels():
    drift = [1.0, 3.0, 1.2, 5.0, 0.9, 4.0, 1.1, 2.5]  # the machine speeds up and slows down between iterations
    baseline = [2.0 * d for d in drift]
    candidate = [1.0 * d for d in drift]
    assert paired_speedup(baseline, candidate) == 2.0
    assert speedup_ci95(baseline, candidate) == (2.0, 2.0)
    # The ratio of medians would not see through the drift if the candidate had missed one slow iteration; with three
    # ratios the interquartile mean is their median.
    assert paired_speedup([2.0, 2.0, 9.0], [1.0, 1.0, 1.0]) == 2.0


def test_the_slowest_and_fastest_quarter_of_ratios_are_dropped_and_the_middle_half_averaged():
    ratios = [0.5] * 25 + [1.0] * 25 + [4.0] * 25 + [100.0] * 25  # in log2: -1, 0, 2, 6.6
    assert paired_speedup(ratios, [1.0] * 100) == pytest.approx(2.0)  # exp(mean(log 1, log 4))


def test_a_module_against_itself_reads_one_on_the_h200s_clustered_microsecond_calls():
    # Recorded on the H200: Inductor's timestep embedding (7-8 us) against a second instance of itself, 3200 calls
    # each. Call times move by +-6% with the input set, the paired ratios cluster, and the median of ratios read
    # 1.030 and 0.976 (both intervals holding 1); averaging the middle half reads within 1%.
    recorded = json.loads((Path(__file__).parent / "data" / "h200_noop_call_times.json").read_text())["rows"]
    for case, calls in recorded.items():
        baseline, candidate = calls["baseline_us"], calls["candidate_us"]
        assert abs(1 - float(np.median(np.divide(baseline, candidate)))) > 0.02, case  # what the median read
        assert abs(1 - paired_speedup(baseline, candidate)) < 0.01, case
        for clusters in (1, 8):  # the harness resamples its 8 input sets, then iterations
            low, high = speedup_ci95(baseline, candidate, clusters=clusters)
            assert low <= 1.0 <= high and high - low < 0.025, (case, clusters, low, high)


class DisturbedClock(FakeClock):
    """Every call takes 1 ms, except one in every four (a fixed phase of the call sequence): 1.15 ms."""

    def __init__(self) -> None:
        super().__init__([])
        self.count = 0

    def time_call(self, call, prepare=None, key="") -> float:
        self.duration = 1.15 if self.count % 4 == 0 else 1.0
        self.count += 1
        return super().time_call(call, prepare, key)


def test_a_disturbance_every_fourth_call_lands_on_both_implementations_when_pair_orders_are_drawn():
    calls = {"baseline": lambda s: None, "candidate": lambda s: None}
    # Strict A B, B A alternation puts every slow call on the baseline: half the ratios read 1.15, and the speedup
    # of a module against itself lands between the two clusters (the H200's embedding pattern, sixth session).
    alternate = time_interleaved(calls, [None], DisturbedClock(), warmup=0, iterations=200, order_rng=ALTERNATE)
    assert all(t == 1.0 for t in alternate["candidate"])
    assert paired_speedup(alternate["baseline"], alternate["candidate"]) > 1.05
    # Drawn orders share the slow calls out, so ratios move into both tails and the middle half is undisturbed, or
    # nearly: the two tails need not hold exactly a quarter each.
    drawn = time_interleaved(calls, [None], DisturbedClock(), warmup=0, iterations=200, order_rng=random.Random(0))
    assert paired_speedup(drawn["baseline"], drawn["candidate"]) == pytest.approx(1.0, abs=0.01)
    slow_baseline = sum(t > 1.0 for t in drawn["baseline"])
    assert 35 <= slow_baseline <= 65 and slow_baseline + sum(t > 1.0 for t in drawn["candidate"]) == 100


def test_each_pair_of_iterations_runs_an_order_then_its_reverse():
    log: list[str] = []
    clock = FakeClock(log)
    calls = {name: (lambda s, name=name: log.append(name)) for name in "abc"}
    time_interleaved(calls, [None], clock, warmup=0, iterations=40, order_rng=random.Random(1))
    names = "".join(event for event in log if event in "abc")
    orders = [names[i:i + 3] for i in range(0, len(names), 3)]
    assert all(second == first[::-1] for first, second in zip(orders[0::2], orders[1::2]))
    assert len(set(orders[0::2])) > 1  # the first order of a pair is drawn, not fixed


def test_time_interleaved_runs_iterations_in_pairs():
    samples = time_interleaved({"a": lambda s: None}, [None], FakeClock([]), warmup=1, iterations=5)
    assert len(samples["a"]) == 6


def test_paired_samples_must_have_the_same_length():
    with pytest.raises(ValueError, match="same non-zero length"):
        paired_speedup([1.0, 2.0], [1.0])


def test_repetition_stops_once_the_interval_is_tight_and_doubles_the_sample_until_then():
    rng = random.Random(0)
    noisy = iter([rng.choice([0.5, 1.5]) for _ in range(1000)])
    batches: list[int] = []

    def more(count: int) -> dict[str, list[float]]:
        batches.append(count)
        return {"baseline": [1.0] * count, "candidate": [next(noisy) for _ in range(count)]}

    samples = {"baseline": [1.0] * 4, "candidate": [0.5, 0.5, 1.5, 1.5]}
    extend_until_tight(samples, more, target_ci=0.01, max_iterations=64, max_seconds=60.0)
    assert batches == [4, 8, 16, 32] and len(samples["baseline"]) == 64  # never tight: capped at max_iterations
    steady = {"baseline": [2.0] * 8, "candidate": [1.0] * 8}
    extend_until_tight(steady, more, target_ci=0.01, max_iterations=64, max_seconds=60.0)
    assert len(steady["baseline"]) == 8 and len(batches) == 4  # already tight: nothing added


def test_repetition_fills_the_time_cap_without_passing_it():
    batches: list[int] = []

    def more(count: int) -> dict[str, list[float]]:  # never tight; an iteration (a call a side) costs 2 s
        batches.append(count)
        return {"baseline": [1500.0, 500.0] * (count // 2), "candidate": [500.0, 1500.0] * (count // 2)}

    samples = more(4)  # 8 s of timed work already
    batches.clear()
    extend_until_tight(samples, more, target_ci=0.001, max_iterations=1000, max_seconds=20.0)
    assert batches == [4, 2]  # 8 s + 8 s, then the 4 s left hold 2 iterations, not the doubling's 8
    assert sum(samples["baseline"]) + sum(samples["candidate"]) == 20_000.0


def test_the_time_cap_counts_the_phases_wall_time_where_given():
    wall = [0.0]

    def more(count: int) -> dict[str, list[float]]:  # 1 ms of timed work an iteration, 1 s of wall time (pads...)
        wall[0] += count * 1.0
        return {"baseline": [0.5, 0.7] * (count // 2), "candidate": [0.5, 0.3] * (count // 2)}

    samples = more(8)
    extend_until_tight(samples, more, target_ci=0.001, max_iterations=3200, max_seconds=20.0,
                       elapsed=lambda: wall[0])
    assert len(samples["baseline"]) == 20 and wall[0] == 20.0  # on timed work alone it would run to 3200


def test_repetition_stops_where_more_calls_cannot_narrow_what_the_interval_measures():
    batches: list[int] = []

    def more(count: int) -> dict[str, list[float]]:  # never tight
        batches.append(count)
        return {"baseline": [1.5, 0.5] * (count // 2), "candidate": [0.5, 1.5] * (count // 2)}

    samples = more(8)
    asked: list[int] = []

    def settled() -> bool:  # the calls' launches say the interval holds the host (timing.host_bound_settled)
        asked.append(len(samples["baseline"]))
        return True

    extend_until_tight(samples, more, target_ci=0.01, max_iterations=3200, max_seconds=60.0, settled=settled)
    assert len(samples["baseline"]) == 8 and batches == [8] and asked == [8]  # asked once, after the first batch
    steady = {"baseline": [2.0] * 8, "candidate": [1.0] * 8}
    extend_until_tight(steady, more, target_ci=0.01, max_iterations=64, max_seconds=60.0, settled=settled)
    assert asked == [8]  # a tight interval ends it before settled() is asked


def test_host_clock_measures_the_call_in_milliseconds():
    import time

    assert 4.0 <= HostClock().time_call(lambda: time.sleep(0.005)) < 200.0


def test_observe_sees_each_timed_output_outside_the_interval():
    log: list[str] = []
    clock = FakeClock(log)
    seen = []

    def observe(name, index, inputs, output):
        assert not clock.open
        seen.append((name, index, inputs, output))

    time_interleaved({"a": lambda s: s * 10}, [1, 2], clock, warmup=1, iterations=4, observe=observe)
    assert seen == [("a", 0, 1, 10), ("a", 1, 2, 20), ("a", 2, 1, 10), ("a", 3, 2, 20)]


class CheckingClock(FakeClock):
    """A fake CUDA clock that leaves the host-side evidence a real one does: per implementation, the lag of each
    call in turn (a float: every call the same)."""

    def __init__(self, lags: dict[str, float | list[float]], event_ms: float = 1.0, wall_ms: float = 2.0) -> None:
        super().__init__([])
        self.lags, self.event_ms, self.wall_ms, self.current = lags, event_ms, wall_ms, ""
        self.calls: dict[str, int] = {}

    def time_call(self, call, prepare=None, key="") -> float:
        from fastkernels.timing import CallCheck

        duration = super().time_call(call, prepare, key)
        lags = self.lags[self.current]
        index = self.calls[self.current] = self.calls.get(self.current, -1) + 1
        lag = lags[index % len(lags)] if isinstance(lags, list) else lags
        self.last_check = CallCheck(self.event_ms, self.wall_ms, lag)
        return duration


def escape_verdict(lags: dict[str, float | list[float]], event_ms: float = 1.0, wall_ms: float = 2.0,
                   allowed: bool = False) -> str:
    from fastkernels.checks import CaseFailure
    from fastkernels.stream_escape import StreamEscape

    clock = CheckingClock(lags, event_ms, wall_ms)
    escape = StreamEscape(clock)

    def call_for(name):
        def call(inputs):
            clock.current = name
        return call

    time_interleaved({name: call_for(name) for name in lags}, [None], clock, warmup=0, iterations=50,
                     observe=escape.observe)
    try:
        escape.verify(allowed)
    except CaseFailure as failure:
        return failure.reason
    return ""


def test_work_left_running_after_the_timed_stream_is_a_reward_hack():
    assert "another stream" in escape_verdict({"baseline": 0.01, "candidate": 0.8})
    assert escape_verdict({"baseline": 0.01, "candidate": 0.8}, allowed=True) == ""
    assert escape_verdict({"baseline": 0.01, "candidate": 0.02}) == ""


def test_a_little_work_hidden_behind_a_microsecond_kernel_is_caught():
    # 40 us hidden after each 10 us call: a 5x "speedup" that the former fixed 50 us floor let through.
    assert "another stream" in escape_verdict({"baseline": 0.008, "candidate": 0.048}, event_ms=0.01, wall_ms=0.1)


def test_work_hidden_in_half_of_the_calls_is_caught():
    assert "another stream" in escape_verdict({"baseline": 0.01, "candidate": [0.01, 0.5]})


def test_host_noise_in_a_fifth_of_the_candidate_calls_is_not_a_reward_hack():
    # The H200 pattern of 2026-11-30: 6-10 of 50 honest calls lagged 50-80 us while the baseline's happened not to.
    noisy = [0.01, 0.01, 0.01, 0.01, 0.08]
    assert escape_verdict({"baseline": 0.01, "candidate": noisy}, event_ms=0.05, wall_ms=0.2) == ""


def test_the_lags_compared_are_reported_at_the_60th_percentile_of_calls():
    from fastkernels.stream_escape import StreamEscape

    clock = CheckingClock({"baseline": [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], "candidate": 0.02})
    escape = StreamEscape(clock)

    def call_for(name):
        def call(inputs):
            clock.current = name
        return call

    assert escape.lags() is None
    time_interleaved({name: call_for(name) for name in ("baseline", "candidate")}, [None], clock, warmup=0,
                     iterations=6, observe=escape.observe)
    assert escape.lags() == pytest.approx((0.04, 0.02))


def test_a_verdict_of_escaped_work_asks_for_a_fresh_batch_of_at_least_twenty_calls_first():
    from fastkernels.stream_escape import StreamEscape

    def escape_after(iterations: int, lags: list[float]) -> StreamEscape:
        clock = CheckingClock({"baseline": 0.018, "candidate": lags}, event_ms=0.341, wall_ms=0.5)
        escape = StreamEscape(clock)
        calls = {name: (lambda inputs, name=name: setattr(clock, "current", name)) for name in clock.lags}
        time_interleaved(calls, [None], clock, warmup=0, iterations=iterations, observe=escape.observe)
        return escape

    # as the warm step on a shared H200 (2026-12-02): 4 calls a side, the candidate's 60th percentile lag 40 us
    # (two calls at 45 us) against the baseline's 18 us
    escape = escape_after(4, [0.018, 0.045, 0.045, 0.018])
    assert escape.start_confirmation(side_streams_allowed=True) == 0  # side streams allowed: no verdict to confirm
    assert escape.start_confirmation(side_streams_allowed=False) == 20
    assert escape.checks == {} and len(escape.set_aside[0]["candidate"]) == 4  # those calls no longer count
    # on 40 calls the fresh batch is as long as the calls set aside
    assert escape_after(40, [0.5]).start_confirmation(side_streams_allowed=False) == 40
    # calls the rule does not convict need no confirmation, and keep counting
    honest = escape_after(20, [0.018])
    assert honest.start_confirmation(side_streams_allowed=False) == 0 and len(honest.checks["candidate"]) == 20
    assert "another stream" in escape_verdict({"baseline": 0.01, "candidate": 0.5})


def test_a_device_that_lags_after_every_call_is_no_evidence_against_the_candidate():
    assert escape_verdict({"baseline": 0.8, "candidate": 0.8}) == ""


def test_an_event_interval_longer_than_the_host_wall_time_is_timer_tampering():
    assert "timer tampering" in escape_verdict({"baseline": 0.0, "candidate": 0.0}, event_ms=5.0, wall_ms=2.0)


def test_batches_timed_one_after_another_continue_the_rotation_of_input_sets():
    seen: list[int] = []
    done = 0
    for batch in (6, 6, 12):  # 6 is not a multiple of 4: a batch restarting at set 0 would break the rotation
        samples = time_interleaved({"a": seen.append}, continuing([0, 1, 2, 3], done), FakeClock([]), 0, batch)
        done += len(samples["a"])
    assert seen == [i % 4 for i in range(24)]


def test_the_interval_resamples_clusters_when_iterations_of_a_cluster_share_a_draw():
    # Four input sets (or graph captures) whose ratios differ by +-3% but barely within: iterations alone look
    # certain, the clusters say how far another draw of sets could land.
    offsets = [1.03, 0.97, 1.02, 0.985]
    baseline = [offsets[i % 4] * (1 + 0.001 * ((i * 7) % 5 - 2)) for i in range(400)]
    candidate = [1.0] * 400
    naive = speedup_ci95(baseline, candidate)
    clustered = speedup_ci95(baseline, candidate, clusters=4)
    assert naive[1] - naive[0] < 0.01 < clustered[1] - clustered[0]
    assert clustered[0] <= paired_speedup(baseline, candidate) <= clustered[1]


_times = st.lists(st.floats(min_value=1e-3, max_value=1e3, allow_nan=False), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_speedup_estimator_is_a_proper_average_of_the_paired_ratios(data):
    baseline = data.draw(_times)
    candidate = data.draw(st.lists(st.floats(min_value=1e-3, max_value=1e3, allow_nan=False),
                                   min_size=len(baseline), max_size=len(baseline)))
    ratios = np.divide(baseline, candidate)
    s = paired_speedup(baseline, candidate)
    assert ratios.min() * (1 - 1e-9) <= s <= ratios.max() * (1 + 1e-9)  # between the extreme ratios
    assert paired_speedup(candidate, baseline) == pytest.approx(1 / s, rel=1e-9)  # swapping roles inverts it
    scale = data.draw(st.floats(min_value=1e-2, max_value=1e2))
    assert paired_speedup([b * scale for b in baseline], [c * scale for c in candidate]) == pytest.approx(s, rel=1e-9)
    assert paired_speedup(baseline, baseline) == 1.0  # a module against itself, call for call


def test_a_stream_escape_check_kept_from_the_calls_or_shadowed_is_a_reward_hack():
    # candidate code that silences the check's `observe` leaves it no calls to judge, and one that shadows `verify`
    # judges nothing: the harness counts the timed calls itself and looks up the methods on the class
    from fastkernels.checks import CaseFailure
    from fastkernels.stream_escape import StreamEscape, verify_escape

    clock = CheckingClock({"baseline": 0.01, "candidate": 0.8})

    def timed(escape: StreamEscape, silence_after: int | None = None) -> int:
        calls = {"baseline": 0, "candidate": 0}

        def call_for(name):
            def call(inputs):
                clock.current = name
                calls[name] += 1
                if silence_after is not None and calls["candidate"] == silence_after:
                    escape.observe = lambda *args: None
            return call

        time_interleaved({name: call_for(name) for name in calls}, [None], clock, warmup=0, iterations=50,
                         observe=lambda *args: escape.observe(*args))
        return calls["candidate"]

    escape = StreamEscape(clock)
    count = timed(escape, silence_after=1)
    with pytest.raises(CaseFailure, match=r"stream-escape state was changed while the candidate ran: observe \(a "
                                          r"method\) shadowed"):
        verify_escape(escape, False, clock, count)
    escape = StreamEscape(clock)
    count = timed(escape)
    escape.checks["candidate"] = escape.checks["candidate"][:3]  # the hidden work's calls taken out
    with pytest.raises(CaseFailure, match=f"3 of the {count} timed candidate calls were checked"):
        verify_escape(escape, False, clock, count)
    escape.verify = lambda allowed: None
    with pytest.raises(CaseFailure, match=r"verify \(a method\) shadowed"):
        verify_escape(escape, False, clock, count)
    escape = StreamEscape(clock)
    count = timed(escape)
    with pytest.raises(CaseFailure, match="another stream"):  # untouched: the check itself convicts
        verify_escape(escape, False, clock, count)
    # a clock that leaves no CallCheck (the CPU's host clock) gives the check nothing to count
    host_clock = HostClock(None)
    verify_escape(StreamEscape(host_clock), False, host_clock, count)


def test_every_timed_sample_is_recorded_the_moment_it_is_measured_before_the_next_call():
    # the judge's record of the samples (checks.time_rechecked) must hold each one before candidate code runs again
    events: list[str] = []

    class Clock:
        name = "fake"

        def time_call(self, call, prepare=None, key=""):
            call()
            return 1.0

    def call_for(name):
        return lambda inputs: events.append(f"call {name}")

    samples = time_interleaved({name: call_for(name) for name in ("baseline", "candidate")}, [None], Clock(),
                               warmup=1, iterations=4, record=lambda name, ms: events.append(f"record {name}"))
    timed = events[2:]  # the warm-up's two calls are not recorded
    assert events[:2] == ["call baseline", "call candidate"] and len(timed) == 16
    assert all(a == f"call {b.split()[1]}" for a, b in zip(timed[0::2], timed[1::2]))  # each call, then its record
    assert samples == {"baseline": [1.0] * 4, "candidate": [1.0] * 4}

"""The timing protocol, checked against a fake clock: what is timed, in what order, on which inputs."""

from __future__ import annotations

from fastkernels.timing import HostClock, speedup_ci95, summarize, time_interleaved


class FakeClock:
    """Each timed call takes the duration its implementation declares; records what happened inside intervals."""

    name = "fake"

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.open = False
        self.duration = 1.0

    def time_call(self, call, prepare=None) -> float:
        if prepare is not None:
            prepare()
        self.open = True
        self.log.append("start")
        call()
        self.log.append("stop")
        self.open = False
        return self.duration


def test_warmup_is_untimed_then_calls_alternate_order_on_rotated_sets():
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
                               prepare=lambda name, index, inputs: flush())
    assert samples == {"a": [2.0] * 4, "b": [1.0] * 4}
    assert seen[:4] == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]  # warm-up, untimed
    assert log[: 4] == ["a0", "b0", "a1", "b1"]
    timed = seen[4:]
    assert timed == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2), ("b", 0), ("a", 0)]
    assert log[4:9] == ["flush", "start", "a0", "stop", "flush"]


def test_every_timed_call_is_preceded_by_a_flush():
    log: list[str] = []
    time_interleaved({"x": lambda s: 1.0}, [None], FakeClock(log), warmup=1, iterations=5,
                     prepare=lambda name, index, inputs: log.append("flush"))
    timed = [event for event in log if event in ("flush", "start")]
    assert timed == ["flush", "start"] * 5


def test_summary_reports_median_and_relative_interquartile_spread():
    summary = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert summary.median_ms == 3.0 and summary.spread == (4.0 - 2.0) / 3.0


def test_bootstrap_interval_brackets_the_true_ratio():
    low, high = speedup_ci95([2.0, 2.1, 1.9, 2.0, 2.05] * 4, [1.0, 1.02, 0.98, 1.0, 1.01] * 4)
    assert low <= 2.0 <= high and high - low < 0.3


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

    time_interleaved({"a": lambda s: s * 10}, [1, 2], clock, warmup=1, iterations=3, observe=observe)
    assert seen == [("a", 0, 1, 10), ("a", 1, 2, 20), ("a", 2, 1, 10)]

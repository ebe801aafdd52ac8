"""Choosing the fastest correct production baseline: contenders are timed interleaved in batches, a clearly slower
one (its fastest call over 10% slower than the best contender's median) stops being timed after its batch, and
contenders within noise of each other are compared over every selection iteration."""

from __future__ import annotations

import random
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from fastkernels.baseline_choice import CLEARLY_SLOWER, SELECTION_BATCH, choose_baseline


class FakeClock:
    """A module's call 'takes' the module's time plus up to 2% noise; the clock counts calls per module."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.ran: tuple[str, float] = ("", 0.0)  # what the last call ran: (module, ms)
        self._rng = random.Random(7)

    def time_call(self, call, prepare=None, key=""):
        if prepare is not None:
            prepare()
        call()
        name, ms = self.ran
        self.calls[name] = self.calls.get(name, 0) + 1
        return ms * (1 + self._rng.uniform(0, 0.02))


CLOCK = FakeClock()


class Module:
    def __init__(self, name: str, ms: float) -> None:
        self.name, self.ms = name, ms

    def __call__(self, **inputs):
        CLOCK.ran = (self.name, self.ms)


def _context(iterations: int = 50, warmup: int = 2):
    CLOCK.calls.clear()
    return SimpleNamespace(harness=SimpleNamespace(iterations=iterations, warmup=warmup), flush=None,
                           plan=SimpleNamespace(manifest=SimpleNamespace(name="task")), case_name="case",
                           clock=CLOCK)


def test_a_clearly_slower_contender_is_timed_for_one_batch_only():
    context = _context()
    chosen, medians = choose_baseline(context, {"fast": Module("fast", 13.0), "slow": Module("slow", 22.0)},
                                       sets=[{}] * 4)
    assert chosen == "fast"
    warmup = context.harness.warmup
    assert context.clock.calls["slow"] == warmup + SELECTION_BATCH
    assert set(medians) == {"fast", "slow"} and 21.9 < medians["slow"] < 22.5  # still reported, from its batch
    assert context.clock.calls["fast"] == warmup + SELECTION_BATCH  # alone, nothing left to choose between


def test_contenders_within_noise_are_compared_over_every_selection_iteration():
    context = _context()
    # 3% apart with 2% noise: the slower one's fastest call is never 10% over the faster one's median
    chosen, medians = choose_baseline(context, {"a": Module("a", 10.3), "b": Module("b", 10.0)}, sets=[{}] * 4)
    assert chosen == "b"
    selection = context.harness.iterations // 2 + (context.harness.iterations // 2) % 2  # paired: rounded up to even
    assert context.clock.calls == {"a": context.harness.warmup + selection, "b": context.harness.warmup + selection}


def test_of_three_contenders_only_the_clearly_slower_one_is_dropped():
    context = _context()
    contenders = {"x": Module("x", 10.0), "y": Module("y", 10.0 * (CLEARLY_SLOWER + 0.3)), "z": Module("z", 10.1)}
    chosen, _ = choose_baseline(context, contenders, sets=[{}] * 4)
    assert chosen == "x"
    assert context.clock.calls["y"] == context.harness.warmup + SELECTION_BATCH
    assert context.clock.calls["x"] == context.clock.calls["z"] > context.clock.calls["y"]


def test_a_single_baseline_is_chosen_without_timing():
    context = _context()
    chosen, medians = choose_baseline(context, {"only": Module("only", 1.0)}, sets=[{}])
    assert (chosen, medians, context.clock.calls) == ("only", {}, {})


@settings(max_examples=60, deadline=None)
@given(times=st.lists(st.floats(min_value=0.01, max_value=50.0), min_size=2, max_size=4),
       iterations=st.integers(min_value=3, max_value=60))
def test_the_chosen_baseline_is_never_clearly_slower_than_the_fastest(times, iterations):
    # with up to 2% noise a call, whatever the contenders' times: the one chosen is within the noise of the fastest,
    # two or more contenders within 10% of the fastest (noise included) are all timed to the end, and none is timed
    # beyond the selection's budget
    context = _context(iterations=2 * iterations, warmup=1)
    contenders = {f"impl{index}": Module(f"impl{index}", ms) for index, ms in enumerate(times)}
    chosen, medians = choose_baseline(context, contenders, sets=[{}] * 3)
    fastest = min(times)
    assert contenders[chosen].ms <= fastest * 1.02 * 1.0001
    assert set(medians) == set(contenders)
    budget = 1 + iterations + iterations % 2  # a warm-up call, then the iterations in (A B, B A) pairs
    assert all(calls <= budget for calls in context.clock.calls.values())
    close = [name for name, module in contenders.items() if module.ms * 1.02 < CLEARLY_SLOWER * fastest]
    if len(close) > 1:  # never dropped, so the selection ran to its end with all of them
        assert all(context.clock.calls[name] == budget for name in close)

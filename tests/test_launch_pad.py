"""The CUDA-event clock's launch pad: a spin kernel queued ahead of the start event so that the interval holds the
call's device work, not the host's launch latency. It is sized per implementation: it starts short, and a call
whose launch outlasted it (the device reached the start event before the host had queued the end event) is timed
again behind a doubled pad. A fake device timeline stands in for CUDA here; tests/gpu runs the real clock."""

from __future__ import annotations

import pytest
import torch

from fastkernels import timing
from fastkernels.timing import CudaEventClock, pad_note, time_interleaved


class FakeDevice:
    """One stream's timeline in microseconds: the host queues work at `now`; the device runs it in order, each item
    starting when both the previous one is done and the host has queued it."""

    def __init__(self) -> None:
        self.now = 0.0  # host time
        self.tail = 0.0  # when the device finishes what is queued
        self.spins: list[float] = []

    def sync(self) -> None:
        self.now = max(self.now, self.tail)

    def spin(self, cycles: int) -> None:
        self.spins.append(cycles / 2000)
        self.queue(cycles / 2000)

    def queue(self, work_us: float) -> None:
        self.tail = max(self.tail, self.now) + work_us

    def launch(self, host_us: float, work_us: float) -> None:
        """A call: the host spends host_us launching it, then its work is queued."""
        self.now += host_us
        self.queue(work_us)

    def host_ns(self) -> int:
        return int(self.now * 1000)


@pytest.fixture
def device(monkeypatch) -> FakeDevice:
    fake = FakeDevice()

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.at = 0.0

        def record(self) -> None:
            self.at = max(fake.tail, fake.now)
            fake.tail = self.at

        def query(self) -> bool:
            return fake.now >= self.at

        def synchronize(self) -> None:
            fake.now = max(fake.now, self.at)

        def elapsed_time(self, end: "Event") -> float:
            return (end.at - self.at) / 1000

    monkeypatch.setattr(torch.cuda, "synchronize", fake.sync)
    monkeypatch.setattr(torch.cuda, "_sleep", fake.spin)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(timing, "_perf_counter_ns", fake.host_ns)
    return fake


def test_a_call_whose_launch_outlasts_the_pad_is_timed_again_behind_a_doubled_pad_until_it_fits(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)
    calls = []

    def call() -> None:
        calls.append(1)
        device.launch(host_us=300, work_us=10)  # a Python-heavy launcher: 300 us of host time for 10 us of work

    assert clock.time_call(call, key="a") == pytest.approx(0.010)  # the device work only, no host latency
    assert device.spins == [50, 100, 200, 400] and clock.retimed == 3 and len(calls) == 4
    assert clock.pad_us("a") == 400
    clock.time_call(call, key="a")  # the pad it needed is kept for the key's later calls
    assert device.spins[-1] == 400 and clock.retimed == 3


def test_a_quick_launch_waits_only_behind_the_short_pad_whatever_other_keys_needed(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)
    clock.time_call(lambda: device.launch(host_us=900, work_us=10), key="slow launcher")
    retimed = clock.retimed
    assert clock.time_call(lambda: device.launch(host_us=5, work_us=10), key="cuBLAS") == pytest.approx(0.010)
    assert device.spins[-1] == 50 and clock.retimed == retimed and clock.pad_us("slow launcher") == 1600


def test_a_launch_longer_than_the_largest_pad_is_timed_with_its_host_latency_which_only_slows_it(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=200)
    measured = clock.time_call(lambda: device.launch(host_us=1000, work_us=10), key="a")
    assert device.spins == [50, 100, 200]  # gives up at the largest pad
    assert measured > 0.010  # the interval holds the host's lateness: longer, never shorter


def test_no_pad_means_no_spin_and_no_retiming(device):
    clock = CudaEventClock(pad_us=0)
    assert clock.time_call(lambda: device.launch(host_us=300, work_us=10)) > 0.010
    assert device.spins == [] and clock.retimed == 0


def test_a_call_timed_again_gets_its_inputs_prepared_again_and_only_its_last_output_is_observed(device):
    clock = CudaEventClock(pad_us=50)
    produced = iter(range(100))
    prepared: list[str] = []
    observed: list[tuple[str, int]] = []

    def slow(_inputs) -> int:
        device.launch(host_us=150, work_us=10)
        return next(produced)

    def quick(_inputs) -> int:
        device.launch(host_us=1, work_us=10)
        return -1

    time_interleaved({"baseline": quick, "candidate": slow}, [None], clock, warmup=0, iterations=2,
                     prepare=lambda name, i, _: prepared.append(name),
                     observe=lambda name, i, _, output: observed.append((name, output)))
    # the candidate's first call ran three times (pads 50, 100, 200), each after its own prepare; the outputs of
    # the first two were stale, and only the third (2) was observed; its second call fit the kept pad at once
    assert prepared.count("candidate") == 4 and prepared.count("baseline") == 2
    assert [output for name, output in observed if name == "candidate"] == [2, 3]


def test_every_implementation_of_a_case_is_timed_behind_the_same_pad_settled_in_the_warm_up(device):
    # on the H200 a 37 us kernel behind a 400 us pad read 5% faster than its twin behind 200 us: the pad is the
    # case's, grown by whichever implementation launches slowest, and the warm-up calls grow it before timing
    clock = CudaEventClock(pad_us=50)

    def launcher(host_us: float):
        def call(_inputs) -> None:
            device.launch(host_us=host_us, work_us=10)
        return call

    time_interleaved({"baseline": launcher(1), "candidate": launcher(150)}, [None], clock, warmup=2, iterations=4,
                     label="task/case")
    retimed_in_warmup = clock.retimed
    assert retimed_in_warmup == 2 and clock.pad_us("task/case") == 200
    assert device.spins[-8:] == [200] * 8  # both implementations' timed calls, behind one pad


def test_a_pad_written_down_to_nothing_starts_again_from_the_first_pad(device):
    clock = CudaEventClock(pad_us=50)
    clock._pads["a"] = 0  # what code reaching the clock could write: it gets the first pad, never less
    clock.time_call(lambda: device.launch(host_us=5, work_us=10), key="a")
    assert device.spins == [50]


def test_a_call_that_waits_for_the_device_inside_itself_does_not_grow_the_pad(device):
    # Liger's MoE experts read a routing count back to the host: behind any pad the device reaches the start event
    # first, and the pad used to double up to its largest (20 ms) for every call of the case
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)

    def syncing() -> None:
        device.launch(host_us=20, work_us=100)
        device.sync()  # .item(): the host waits for the pad and the work queued so far
        device.launch(host_us=20, work_us=100)

    measured = clock.time_call(syncing, key="moe")
    assert device.spins == [50, 100]  # one doubling shows the host's time grew with the pad: no more
    assert clock.pad_us("moe") == 50 and clock.waited == {"moe": 1} and clock.retimed == 1
    assert measured >= 0.200  # its interval: both parts of its work and the host's wait between them
    clock.time_call(syncing, key="moe")
    assert device.spins[2:] == [50, 100] and clock.pad_us("moe") == 50
    assert pad_note(clock, "moe").startswith(", launch pad 50 us, 2 calls waited for the device, launches ")


def test_the_pad_note_says_whether_every_launch_was_slow_or_a_few_were_late(device):
    # 99 calls queued in 20 us and one in 900 us: the pad that settled (1600 us) answered one late launch
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)
    for index in range(100):
        clock.time_call(lambda: device.launch(host_us=900 if index == 50 else 20, work_us=10), key="case")
    assert pad_note(clock, "case") == (", launch pad 1600 us, launches 20 us median, 29 us p99, 900 us max over 100"
                                       " calls, 5 timed again")


def test_a_slow_launcher_still_grows_the_shared_pad_when_the_other_implementation_waits_for_the_device(device):
    # a candidate that syncs inside itself cannot keep the case's pad short for a Python-heavy baseline: the
    # baseline's own catch-ups grow it, and the baseline's interval stays free of its host latency
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)

    def syncing(_inputs) -> None:
        device.launch(host_us=5, work_us=10)
        device.sync()

    def slow_launcher(_inputs) -> None:
        device.launch(host_us=300, work_us=10)

    samples = time_interleaved({"baseline": slow_launcher, "candidate": syncing}, [None], clock, warmup=1,
                               iterations=4, label="task/case")
    assert clock.pad_us("task/case") == 400
    assert samples["baseline"] == pytest.approx([0.010] * 4)


def test_a_call_that_launches_slowly_before_it_waits_is_still_timed_without_its_launch_latency(device):
    # the host launches for 300 us, then reads a result back: the pad grows while the host's time stays put, and
    # once it covers the launch the call's waiting shows; its interval is then its device work and the host's
    # wake-up between the two parts, not the 300 us launch
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)

    def launches_then_waits() -> None:
        device.launch(host_us=300, work_us=10)
        device.sync()
        device.launch(host_us=5, work_us=10)

    first = clock.time_call(launches_then_waits, key="k")
    assert device.spins == [50, 100, 200, 400] and clock.waited == {"k": 1}
    assert first == pytest.approx(0.025)  # 10 us + the host's 5 us to launch the rest + 10 us
    assert clock.time_call(launches_then_waits, key="k") == pytest.approx(0.025)
    assert device.spins[4:] == [200, 400]  # every later call: its case's pad, then the probe that covers its launch


def test_without_decay_one_late_launch_keeps_the_case_behind_the_pad_it_needed(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)
    clock.time_call(lambda: device.launch(host_us=180, work_us=10), key="k")  # a hiccup: 180 us once
    for _ in range(20):
        clock.time_call(lambda: device.launch(host_us=5, work_us=10), key="k")
    assert clock.pad_us("k") == 200 and device.spins[-1] == 200


def test_with_decay_the_pad_comes_down_to_what_covers_the_launches_in_time_never_below_the_first_pad(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000, decay_after=4)
    clock.time_call(lambda: device.launch(host_us=180, work_us=10), key="k")  # a hiccup: the pad grows to 200 us
    assert clock.pad_us("k") == 200
    launcher = {"only": lambda _inputs: device.launch(host_us=100, work_us=10)}
    samples = time_interleaved(launcher, [None], clock, warmup=0, iterations=4, label="k")
    # four calls in time behind 200 us, the slowest launched in 100 us: 1.25 x 100 + 20 us covers them
    assert samples["only"] == pytest.approx([0.010] * 4) and clock.pad_us("k") == 145
    quick = {"only": lambda _inputs: device.launch(host_us=5, work_us=10)}
    time_interleaved(quick, [None], clock, warmup=0, iterations=8, label="k")
    assert clock.pad_us("k") == 50 and device.spins[-4:] == [50] * 4  # 26 us would cover them: the first pad


def test_with_decay_a_pad_never_grows_and_a_launcher_that_needs_its_pad_keeps_it_without_being_timed_again(device):
    # a Python-heavy launcher (300 us) doubles its way to 400 us on its first call; the decay then settles on 395 us,
    # which covers every launch: no call is timed again, and every interval is free of host latency
    clock = CudaEventClock(pad_us=50, max_pad_us=20000, decay_after=4)
    slow = {"only": lambda _inputs: device.launch(host_us=300, work_us=10)}
    samples = time_interleaved(slow, [None], clock, warmup=0, iterations=16, label="k")
    assert samples["only"] == pytest.approx([0.010] * 16)
    assert clock.pad_us("k") == 395 and clock.retimed == 3  # 50 -> 100 -> 200 -> 400 on the first call only


def test_with_decay_a_launch_later_than_the_settled_pad_is_timed_again_behind_a_doubled_one(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000, decay_after=4)
    steady = {"only": lambda _inputs: device.launch(host_us=300, work_us=10)}
    time_interleaved(steady, [None], clock, warmup=0, iterations=8, label="k")
    assert clock.pad_us("k") == 395
    retimed = clock.retimed
    late = {"only": lambda _inputs: device.launch(host_us=500, work_us=10)}
    samples = time_interleaved(late, [None], clock, warmup=0, iterations=2, label="k")
    assert samples["only"] == pytest.approx([0.010] * 2)  # the late call's interval is timed again, free of it
    assert clock.retimed == retimed + 1 and clock.pad_us("k") == 790  # grown once, then kept


def test_the_pad_decays_between_iterations_so_both_sides_of_one_wait_behind_the_same_pad(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=20000, decay_after=3)  # odd: a decay mid-pair would show

    def launcher(host_us: float):
        def call(_inputs) -> None:
            device.launch(host_us=host_us, work_us=10)
        return call

    clock.time_call(lambda: device.launch(host_us=350, work_us=10), key="task/case")  # the pad grows to 400
    time_interleaved({"baseline": launcher(60), "candidate": launcher(60)}, [None], clock, warmup=0, iterations=6,
                     label="task/case")
    spins = device.spins[-12:]
    assert all(spins[i] == spins[i + 1] for i in range(0, 12, 2))  # each iteration's two calls: one pad
    assert spins == [400] * 4 + [95] * 8  # after the second iteration: 1.25 x 60 + 20 us


def test_a_call_that_launches_slower_than_the_largest_pad_is_marked_as_holding_host_latency(device):
    clock = CudaEventClock(pad_us=50, max_pad_us=400)
    clock.time_call(lambda: device.launch(host_us=300, work_us=10), key="fits")  # fits behind the 400 us pad
    assert clock.last_check is not None and not clock.last_check.host_bound
    event_ms = clock.time_call(lambda: device.launch(host_us=900, work_us=10), key="too slow")
    assert clock.last_check.host_bound and event_ms > 0.010  # 500 us of the launch sat inside the interval


def test_repetition_is_settled_once_nine_in_ten_of_one_sides_calls_launched_slower_than_the_largest_pad():
    from fastkernels.timing import CallCheck, host_bound_settled, host_latency_note

    device_bound, host_bound = CallCheck(1.0, 1.1, 0.0), CallCheck(1.0, 1.1, 0.0, host_bound=True)
    assert not host_bound_settled({"baseline": [device_bound] * 20, "candidate": [device_bound] * 20})
    assert not host_bound_settled({"baseline": [host_bound] * 17 + [device_bound] * 3})  # 85%: still timed on
    assert not host_bound_settled({"baseline": [], "candidate": []})
    # a mambapy baseline against a one-kernel candidate: the baseline's host jitter bounds the interval
    one_side = {"baseline": [host_bound] * 18 + [device_bound] * 2, "candidate": [device_bound] * 20}
    assert host_bound_settled(one_side)
    assert host_latency_note(one_side, 20000).endswith(
        "(the graph replay speedup compares device time; repetition stops once 90% of one side's calls launch so)")
    few = {"baseline": [device_bound] * 18 + [host_bound] * 2}
    assert host_latency_note(few, 20000).endswith("(the graph replay speedup compares device time)")


def test_a_case_whose_calls_held_host_latency_gets_a_review_note_naming_the_side():
    from fastkernels.timing import CallCheck, host_latency_note

    device_bound, host_bound = CallCheck(1.0, 1.1, 0.0), CallCheck(1.0, 1.1, 0.0, host_bound=True)
    assert host_latency_note({"baseline": [device_bound] * 20, "candidate": [device_bound] * 20}, 20000) == ""
    assert host_latency_note({"baseline": [device_bound] * 39 + [host_bound]}, 20000) == ""  # one hiccup in 40
    note = host_latency_note({"baseline": [device_bound] * 18 + [host_bound] * 2, "candidate": [device_bound] * 20},
                             20000)
    assert note.startswith("eager times hold host latency: 2 of 20 baseline calls launched slower than the 20 ms")
    assert "candidate" not in note and "graph replay" in note
    both = {"candidate": [host_bound] * 20, "baseline": [host_bound] * 20}  # in whichever order the checks came
    assert host_latency_note(both, 20000).startswith(
        "eager times hold host latency: 20 of 20 baseline calls and 20 of 20 candidate calls launched slower")

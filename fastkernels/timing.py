"""The timing protocol: one small, exactly specified function, shared by the GPU and the CPU path.

`time_interleaved(calls, sets, clock, warmup, iterations, label, prepare, observe)`:
1. warm up: every implementation runs `warmup` times, cycling through the input sets; nothing is recorded;
2. iterations come in pairs (n is `iterations` rounded up to even, `paired_count`): the first iteration of a pair
   runs the implementations in an order drawn at random (`order_rng`, fresh OS entropy by default), the second in
   the reverse order (A B then B A, or B A then A B), so drift and order effects hit both, and a disturbance that
   recurs every few calls cannot stay on one implementation (on the H200, 2026-11-30, strict A B, B A alternation
   left one call in four 15% slower, the same call for a whole run); iteration i uses input set i mod len(sets);
3. each call is timed alone by the clock, inside an NVTX range `<label>/<impl>`: the clock first waits until the
   device is idle, runs `prepare` (fresh input values, an L2 flush) outside the timed interval, then times the call
   (a clock may time it again, with `prepare` again, when the interval may hold host latency: only the last call
   counts); `observe` then sees the last call's output, also untimed (random rechecks of timed outputs). The clock's
   key is `label` alone, so every implementation is timed behind the same launch pad: on the H200 (2026-11-30) a
   37 us kernel timed behind a 400 us pad read 5% faster than its twin behind 200 us, both pads correct. The
   warm-up calls also go through the clock (untimed), so the pad has settled before the first timed call.
   Python's garbage collector makes no automatic collection from the first warm-up call to the last timed one
   (garbage_collector.collector_paused, as `timeit` does): a full one stalled the host 151-156 ms
   (garbage_collector.py).
Returns per implementation the list of times in milliseconds, in call order. The speedup of a candidate over a
baseline is `paired_speedup`: the interquartile mean of the per-iteration log ratios, with a bootstrap interval over
iterations.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np
import nvtx

from fastkernels.garbage_collector import collector_paused

# Captured when the harness is imported, before any candidate is: patching time.perf_counter_ns later cannot
# reach the harness's clock (and the integrity check reports the patch).
_perf_counter_ns = time.perf_counter_ns


class Clock(Protocol):
    """Times one call after running `prepare` untimed; `key` names what is timed (a clock may keep state per key).
    `name` says what the samples are. A clock may time a call more than once; only the last call counts."""

    name: str

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None, key: str = "") -> float:
        ...


class HostClock:
    """perf_counter around a call; with `synchronize` (a GPU), wall time from an idle device to an idle device."""

    name = "host_clock"

    def __init__(self, synchronize: Callable[[], None] | None = None) -> None:
        self._synchronize = synchronize or (lambda: None)

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None, key: str = "") -> float:
        if prepare is not None:
            prepare()
        self._synchronize()
        start = _perf_counter_ns()
        call()
        self._synchronize()
        return (_perf_counter_ns() - start) / 1e6


@dataclass(frozen=True)
class CallCheck:
    """Host-side evidence about one timed GPU call, kept to catch work that escapes the timed stream.

    `wall_ms`: host time from before the start event to after a full device sync (>= the event time, always);
    `lag_ms`: how long that full device sync took after the timed stream had finished: work still running on
    another stream shows up here; `host_bound`: the call took longer to launch than the largest launch pad, so its
    `event_ms` holds host latency too (host_latency_note).
    """

    event_ms: float
    wall_ms: float
    lag_ms: float
    host_bound: bool = False


def _waited_for_device(shorter: tuple[int, int], longer: tuple[int, int]) -> bool:
    """Whether a call that caught up behind a pad of `shorter[0]` cycles and again behind `longer[0]` waited for the
    device inside itself (a `.item()`, a host copy, a synchronize): its host time grew with the pad, by at least half
    the added pad (at 2 GHz, 0.5 ns a cycle). A call that only launches slowly takes the same host time behind either
    pad, and its pad keeps growing until the launch fits."""
    added_ns = (longer[0] - shorter[0]) * 0.5  # the pad's cycles at 2 GHz
    return longer[1] - shorter[1] >= added_ns / 2


# A decaying pad settles at COVER_MARGIN times the slowest launch of the in-time calls behind it, plus
# COVER_SLACK_US for the spin kernel's own launch ahead of the start event: a launch a quarter slower than any of
# them is timed again behind a doubled pad, no interval holds it.
COVER_MARGIN = 1.25
COVER_SLACK_US = 20.0


class CudaEventClock:
    """CUDA events on the current stream around one call, measuring device time.

    After a device sync (no earlier work leaks in), `prepare` (the L2 flush) and a spin kernel (the pad) are queued
    ahead of the start event, so the device is still busy while the host launches the call: the interval holds the
    call's device work, not the host's launch latency (which CUDA graphs remove in production). The pad is sized per
    `key` (one case, shared by its implementations: time_interleaved): it starts at `pad_us` and doubles, up to
    `max_pad_us`, whenever the device had already reached the start event when the host finished queuing the call, a
    sign that the device may have waited for the host inside the interval; that call is then timed again. So a call
    that takes the host 20 us to launch is not made to wait behind a pad sized for one that takes 2 ms, and no
    interval holds host latency unless the launch takes longer than `max_pad_us`. A call that waits for the device
    inside itself (its host time grew with the doubled pad) keeps the interval of the longer pad but does not grow
    the case's pad: no pad could keep its wait out, and before this every call of such a case (Liger's MoE experts)
    waited behind the largest pad, 20 ms. Host latency can only lengthen an interval, never shorten it.

    With `decay_after` = N > 0, once N calls in a row were launched in time behind a case's pad, the pad comes down
    to what covers the slowest of those N launches (COVER_MARGIN times it plus COVER_SLACK_US; never below `pad_us`,
    never up), between two iterations (`iteration_done`, which time_interleaved calls): one late launch (a garbage
    collection, the OS scheduling) no longer keeps every later call of the case behind the pad it needed
    (hardswish's 10 us graph replays ended behind 400 us pads on the H200), doubling no longer leaves a pad up to
    twice the launches it answers (eager pads settled at a median 800 us for launches of 290 us median and 419 us
    p99, 2026-12-03), and the implementations of an iteration still wait behind one pad. 0 never shrinks a pad.
    """

    name = "cuda_events"
    # compared by the integrity check (live_objects.fingerprint): code that set the first pad to 0 would time a
    # Python-heavy baseline with its host latency while a one-launch candidate lost nothing
    FIXED_SETTINGS = ("_first_cycles", "_max_cycles", "_decay_after", "_cover_margin", "_cover_slack_cycles")

    def __init__(self, pad_us: float = 50.0, max_pad_us: float = 20000.0, decay_after: int = 0) -> None:
        import torch

        # Bound now, before any candidate is imported, so a patched torch.cuda.Event cannot fake the interval.
        self._device_sync = torch.cuda.synchronize
        self._spin = torch.cuda._sleep
        self._record = torch.cuda.Event.record
        self._reached = torch.cuda.Event.query
        self._wait = torch.cuda.Event.synchronize
        self._elapsed = torch.cuda.Event.elapsed_time
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        # cycles at ~2 GHz; at a lower clock the pad only grows longer
        self._first_cycles, self._max_cycles = int(pad_us * 2000), max(int(max_pad_us * 2000), int(pad_us * 2000))
        self._pads: dict[str, int] = {}
        self._decay_after = decay_after
        self._cover_margin, self._cover_slack_cycles = COVER_MARGIN, int(COVER_SLACK_US * 2000)
        self._in_time: dict[str, int] = {}  # per key: calls in a row launched in time behind the key's pad
        self._streak_ns: dict[str, int] = {}  # per key: the slowest launch (host ns) of those calls
        self.retimed = 0  # calls timed again behind a longer pad
        self.waited: dict[str, int] = {}  # per key: calls that waited for the device inside themselves (no growth)
        # per key: host ns each call took to queue (its attempt that counted), and attempts timed again: what a
        # pad that settled long was answering, a host slow on every call or late on a few (pad_note)
        self.launch_ns: dict[str, list[int]] = {}
        self.late: dict[str, int] = {}
        self.last_check: CallCheck | None = None

    def pad_us(self, key: str = "") -> float:
        """The pad that `key`'s calls are now timed behind, in microseconds (at 2 GHz)."""
        return self._pads.get(key, self._first_cycles) / 2000

    def time_call(self, call: Callable[[], Any], prepare: Callable[[], None] | None = None, key: str = "") -> float:
        cycles = max(self._pads.get(key, 0), self._first_cycles)  # never below the first pad
        shorter: tuple[int, int] | None = None  # (pad cycles, host ns in the call) of the attempt before a doubling
        host_bound = False
        while True:
            self._device_sync()
            if prepare is not None:
                prepare()
            if cycles:
                self._spin(cycles)
            began = _perf_counter_ns()
            self._record(self._start)
            call()
            queued = _perf_counter_ns()
            self._record(self._end)
            caught_up = bool(cycles) and self._reached(self._start)
            self._wait(self._end)
            stream_done = _perf_counter_ns()
            self._device_sync()
            device_done = _perf_counter_ns()
            if not caught_up or cycles >= self._max_cycles:
                host_bound = caught_up  # behind the largest pad the device still reached the call first
                break
            if shorter is not None and _waited_for_device(shorter, (cycles, queued - began)):
                cycles = shorter[0]  # a longer pad only lengthens its wait: the pad is not grown on its account
                self.waited[key] = self.waited.get(key, 0) + 1
                break
            shorter = (cycles, queued - began)
            cycles = min(2 * cycles, self._max_cycles)
            self.retimed += 1
            self.late[key] = self.late.get(key, 0) + 1
        self._pads[key] = cycles  # grown, or as the key had it: `cycles` started there
        self.launch_ns.setdefault(key, []).append(queued - began)
        in_time = shorter is None and not caught_up
        self._in_time[key] = self._in_time.get(key, 0) + 1 if in_time else 0
        self._streak_ns[key] = max(self._streak_ns.get(key, 0), queued - began) if in_time else 0
        event_ms = float(self._elapsed(self._start, self._end))
        self.last_check = CallCheck(event_ms, (device_done - began) / 1e6, (device_done - stream_done) / 1e6,
                                    host_bound)
        return event_ms

    def iteration_done(self, key: str = "") -> None:
        """Between two iterations of time_interleaved (never inside one, so every implementation of an iteration
        waits behind the same pad): after `decay_after` calls in a row launched in time, bring `key`'s pad down to
        what covers the slowest of their launches, and start counting again."""
        pad = self._pads.get(key, 0)
        if self._decay_after and self._in_time.get(key, 0) >= self._decay_after and pad > self._first_cycles:
            covering = int(self._streak_ns.get(key, 0) * 2 * self._cover_margin) + self._cover_slack_cycles
            self._pads[key] = max(self._first_cycles, min(pad, covering))  # 2 cycles a ns, as the pad is sized
            self._in_time[key] = self._streak_ns[key] = 0


def time_interleaved(
    calls: dict[str, Callable[[Any], Any]],
    sets: Sequence[Any],
    clock: Clock,
    warmup: int,
    iterations: int,
    label: str = "",
    prepare: Callable[[str, int, Any], None] | None = None,
    observe: Callable[[str, int, Any, Any], None] | None = None,
    order_rng: random.Random | None = None,
    first_log: list[str] | None = None,
    record: Callable[[str, float], None] | None = None,
) -> dict[str, list[float]]:
    """Time every implementation in `calls` on rotated input `sets`; see the module docstring for the protocol.

    `prepare(name, iteration, inputs)` runs untimed before each timed call (refresh inputs, flush the cache);
    `observe(name, iteration, inputs, output)` runs untimed after it (recheck outputs). Outputs are not kept.
    `order_rng` draws each pair's first order (`ALTERNATE`: always the order of `calls`, for diagnosis);
    `first_log`, when given, gets the name that ran first in each iteration; `record(name, ms)`, when given, gets
    every timed sample the moment it is measured, before any other call runs.
    """
    names = list(calls)
    iterations = paired_count(iterations)
    rng = order_rng if order_rng is not None else random.Random(secrets.randbits(64))
    pad_key = label or "/".join(names)
    with collector_paused():  # a collection inside a timed call would stall the host (garbage_collector.py)
        for index in range(warmup):  # through the clock, untimed: its launch pad settles before the timed calls
            for name in names:
                clock.time_call(lambda: calls[name](sets[index % len(sets)]), None, pad_key)
        samples: dict[str, list[float]] = {name: [] for name in names}
        iteration_done = getattr(clock, "iteration_done", None)  # a clock that adapts between iterations (its pad)
        order = names
        for index in range(iterations):
            if index % 2 == 0:
                order = rng.sample(names, len(names))
            else:
                order = order[::-1]
            inputs = sets[index % len(sets)]
            if first_log is not None:
                first_log.append(order[0])
            for name in order:
                produced: list[Any] = []
                before = (lambda: prepare(name, index, inputs)) if prepare is not None else None
                with nvtx.annotate(f"{label}/{name}" if label else name):
                    measured = clock.time_call(lambda: _keep_last(produced, calls[name](inputs)), before, pad_key)
                if record is not None:
                    record(name, measured)
                samples[name].append(measured)
                if observe is not None:
                    observe(name, index, inputs, produced[-1])
                del produced
            if iteration_done is not None:
                iteration_done(pad_key)
    return samples


def pad_note(clock: Clock, label: str) -> str:
    """", launch pad X us" for a log line: the pad the clock settled on for `label`'s calls (and how many of them
    waited for the device inside themselves), then how long the host took to queue them (median, 99th percentile and
    maximum, warm-ups included) and how many attempts were timed again behind a longer pad; "" for a clock
    without pads. A pad far above the median launch was set by a few late launches, one near it by a slow host."""
    pads = getattr(clock, "pad_us", None)
    if pads is None:
        return ""
    waited = getattr(clock, "waited", {}).get(label, 0)
    note = f", launch pad {pads(label):.0f} us" + (f", {waited} calls waited for the device" if waited else "")
    launches = getattr(clock, "launch_ns", {}).get(label)
    if launches:
        median, tail, most = np.percentile(np.asarray(launches) / 1e3, [50, 99, 100])
        note += (f", launches {median:.0f} us median, {tail:.0f} us p99, {most:.0f} us max over {len(launches)}"
                 f" calls, {getattr(clock, 'late', {}).get(label, 0)} timed again")
    return note


# An implementation whose timed calls launched slower than the largest pad this often gets a review note.
HOST_BOUND_SHARE = 0.05
# ... and this often, its eager times are the host's launch latency: more calls would narrow the host's jitter, not a
# comparison of device time, so the adaptive repetition stops (host_bound_settled). On the H200 (2026-12-03) the
# mambapy composites' calls (23-42 ms to launch) ran 100-200 pairs for that: 89 of 198 cases' 190 s of eager timing
# (the worker logs' "timed (...)" lines whose median launch exceeds their pad, each the seconds since the line before).
HOST_BOUND_SETTLED_SHARE = 0.9


def host_bound_settled(checks: Mapping[str, Sequence[CallCheck]]) -> bool:
    """Whether some implementation launched at least HOST_BOUND_SETTLED_SHARE of its timed calls slower than the
    largest launch pad: then the speedup's eager interval holds that side's host jitter, which no number of calls
    turns into device time (the graph replay compares device time), and repetition past the first batch is waste."""
    return any(calls and sum(check.host_bound for check in calls) >= HOST_BOUND_SETTLED_SHARE * len(calls)
               for calls in checks.values())


def host_latency_note(checks: Mapping[str, Sequence[CallCheck]], max_pad_us: float) -> str:
    """A review note where at least HOST_BOUND_SHARE of an implementation's timed calls took longer to launch than
    the largest launch pad, else "". Their event times hold host latency, which moves with the host: on the H200
    mamba_mixer's composed (mambapy) baseline read 21.5 ms in one session and 16.4 ms in the next, its graph replay
    speedup 3.34x and 3.31x (2026-12-01/02). Such a case's eager speedup is no device-time comparison; its graph
    replay's is."""
    counts = {name: (sum(check.host_bound for check in calls), len(calls)) for name, calls in checks.items()}
    held = [f"{bound} of {total} {name} calls" for name, (bound, total) in sorted(counts.items())  # baseline first
            if total and bound >= HOST_BOUND_SHARE * total]
    if not held:
        return ""
    stopped = (f"; repetition stops once {HOST_BOUND_SETTLED_SHARE:.0%} of one side's calls launch so"
               if host_bound_settled(checks) else "")
    return (f"eager times hold host latency: {' and '.join(held)} launched slower than the {max_pad_us / 1000:g} ms "
            f"launch pad (the graph replay speedup compares device time{stopped})")


def _keep_last(produced: list[Any], output: Any) -> None:
    """Keep only the latest output: a clock that times a call again leaves the earlier call's output stale."""
    produced[:] = [output]


class _Alternate(random.Random):
    """An order_rng that never shuffles: pairs run A B then B A, always (to expose order effects, not to time)."""

    def sample(self, population, k, *, counts=None):  # type: ignore[override]
        return list(population)[:k]


ALTERNATE = _Alternate()


def continuing(sets: Sequence[Any], done: int) -> list[Any]:
    """`sets` rotated so that a batch timed after `done` iterations continues the rotation: overall, iteration i
    uses set i mod len(sets), as the clustered interval (`speedup_ci95(clusters=len(sets))`) assumes."""
    offset = done % len(sets)
    return [*sets[offset:], *sets[:offset]]


def paired_count(iterations: int) -> int:
    """Timed iterations always come in (A B, B A) pairs: `iterations` rounded up to even."""
    return iterations + iterations % 2


@dataclass(frozen=True)
class Summary:
    median_ms: float
    spread: float  # interquartile range over the median


def summarize(samples: Sequence[float]) -> Summary:
    values = np.asarray(samples, dtype=np.float64)
    median = float(np.median(values))
    q1, q3 = np.percentile(values, [25, 75])
    return Summary(median_ms=median, spread=float((q3 - q1) / median) if median > 0 else 0.0)


def paired_speedup(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """The interquartile mean of the per-iteration log ratios log(baseline_i / candidate_i), exponentiated.

    Calls i of baseline and candidate run back to back (in an order drawn per pair of iterations, reversed in the
    second), so their ratio cancels whatever drifts between iterations (clocks, temperature, a neighbour's traffic).
    Dropping the lowest and the highest quarter of the ratios discards disturbed calls as a median would: with the
    orders drawn at random, a disturbance that recurs every few calls lands on either implementation alike and moves
    ratios into both tails. Averaging the middle half, where a median picks one point of it, matters for kernels of a
    few microseconds: on the H200 their call times move by +-6% with the input set and the call's place in the
    sequence, the ratios form clusters, and the median of a module against itself landed up to 3% from 1 where this
    mean stayed within 1.4% (336 noop rows, 2026-11-30; docs/measurement.md). With 3 ratios or fewer it is their
    median.
    """
    return float(np.exp(_interquartile_mean(np.sort(np.log(_ratios(baseline, candidate))))))


def speedup_ci95(
    baseline: Sequence[float], candidate: Sequence[float], seed: int = 0, resamples: int = 2000,
    clusters: int = 1,
) -> tuple[float, float]:
    """Bootstrap 95% interval of `paired_speedup`, resampling iterations (pairs of calls), not calls.

    With `clusters` > 1, iteration i belongs to cluster i mod clusters (the input set it used; under graphs.py the
    capture it replayed) and the bootstrap has two stages: draw clusters with replacement, then iterations within
    each drawn cluster. On the H200 the pairs' ratios of a microsecond kernel moved by +-6% with the input set, and
    captures of one module by up to 6% (a draw at capture), so iterations of one cluster are not independent draws
    of the speedup and resampling them alone gives an interval too narrow; two stages err wide."""
    rng = np.random.default_rng(seed)
    logs = np.log(_ratios(baseline, candidate))
    clusters = min(clusters, logs.size)
    if clusters > 1:  # equal groups (a group's last iteration may be left out), so both stages vectorise
        size = logs.size // clusters
        groups = np.stack([logs[k::clusters][:size] for k in range(clusters)])
    else:
        groups = logs[np.newaxis, :]
    estimates = np.concatenate([_resampled_means(groups, min(500, resamples - done), rng)
                                for done in range(0, resamples, 500)])  # blocks of 500: ~13 MB at 3200 calls
    low, high = np.exp(np.percentile(estimates, [2.5, 97.5]))
    return float(low), float(high)


def _resampled_means(groups: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` bootstrap interquartile means of `groups` [clusters, size]: draw clusters with replacement, then
    values within each drawn cluster with replacement."""
    clusters, size = groups.shape
    picked = groups[rng.integers(clusters, size=(count, clusters))]  # one cluster: always itself
    within = rng.integers(size, size=picked.shape)
    resampled = np.take_along_axis(picked, within, axis=2).reshape(count, clusters * size)
    return _interquartile_mean(np.sort(resampled, axis=1))


def _interquartile_mean(sorted_logs: np.ndarray) -> np.ndarray:
    """Mean over the last axis after dropping ceil(n/4) values at each end (fewer where n <= 3: the median)."""
    n = sorted_logs.shape[-1]
    trim = min(-(-n // 4), (n - 1) // 2)
    return sorted_logs[..., trim:n - trim].mean(axis=-1)


def extend_until_tight(
    samples: dict[str, list[float]],
    more: Callable[[int], dict[str, list[float]]],
    target_ci: float,
    max_iterations: int,
    max_seconds: float,
    seed: int = 0,
    clusters: int = 1,
    elapsed: Callable[[], float] | None = None,
    settled: Callable[[], bool] | None = None,
) -> dict[str, list[float]]:
    """Adaptive repetition: add batches from `more(count)` (doubling the sample) until the bootstrap interval of the
    candidate's speedup is within +-target_ci of it, or `max_iterations` samples (one more where that is odd: batches
    come in pairs) or `max_seconds` are spent, or `settled()` (asked where the interval is still wide) says more
    calls cannot narrow what it measures (host_bound_settled).

    The seconds are `elapsed()` (the phase's wall time so far, its first batch included) where given, else the
    samples' own timed work. A batch is cut to what fits the cap at the seconds per iteration seen so far, so the cap
    holds: uncut doubling took a mamba_mixer case's timed phase to 105 s of wall time against a 20 s cap on the H200
    (2026-12-01; 800 iterations had counted 19 s of timed work, and launch pads, flushes and rechecks cost more).
    `samples` holds "baseline" and usually "candidate"; without a candidate there is no speedup to tighten.
    """
    if "candidate" not in samples:
        return samples

    def spent() -> float:
        return elapsed() if elapsed is not None else sum(sum(values) for values in samples.values()) / 1e3

    while (done := len(samples["baseline"])) < max_iterations:
        low, high = speedup_ci95(samples["baseline"], samples["candidate"], seed=seed, clusters=clusters)
        if (high - low) / 2 <= target_ci * paired_speedup(samples["baseline"], samples["candidate"]):
            break
        if settled is not None and settled():
            break
        seconds = spent()
        fits = max_iterations if seconds <= 0 else int((max_seconds - seconds) / (seconds / done))
        batch = min(done, max_iterations - done, fits - fits % 2)
        if batch < 2:
            break
        added = more(batch)
        for name, values in added.items():
            samples[name].extend(values)
    return samples


def _ratios(baseline: Sequence[float], candidate: Sequence[float]) -> np.ndarray:
    b = np.asarray(baseline, dtype=np.float64)
    c = np.asarray(candidate, dtype=np.float64)
    if b.size != c.size or b.size == 0:
        raise ValueError(f"paired samples must have the same non-zero length ({b.size} vs {c.size})")
    return b / np.maximum(c, 1e-12)

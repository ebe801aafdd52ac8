"""Catching GPU work that escapes the timed stream (a side stream or thread), and timers that lie.

After every timed call the CUDA clock leaves a CallCheck (fastkernels.timing): `lag_ms`, how long a full device sync
took after the timed stream had finished. Work the candidate left running on another stream shows up there, and so
does host noise: on the H200 (2026-11-30), with one worker per GPU on both GPUs of a host, 6-10 of 50 honest calls
of a few tasks lagged 50-80 us, and the former rule (more than 10% of calls over 50 us) called four honest noop rows
REWARD_HACK. Noise strikes baseline and candidate alike, since their calls alternate; hidden work follows the
candidate. So the verdict compares the candidate's lags with the baseline's, calls of the same run, at a quantile
above the median: hidden work in at least 1 - ESCAPE_QUANTILE of the calls raises that quantile of the candidate's
lags, host noise in fewer calls raises neither. Work hidden in fewer calls than that cannot carry the reported
speedup, an interquartile mean of per-call ratios.

A verdict of escaped work must hold twice. On a GPU shared with other work the rule can convict an honest candidate
by chance: on the H200 (2026-12-02) a warm step timing 4 calls a side, six runs sharing the GPU, called a noop
candidate REWARD_HACK on one call's 39 us lag, and after verdicts were drawn from at least 20 calls (2026-12-03,
four runs sharing it) another on 20 calls, 42 us against the baseline's 18. Hidden work follows the candidate into
every batch; chance does not. So where the rule would convict on the calls so far, `start_confirmation` sets them
aside and asks the timing loop for a fresh batch of at least MIN_CALLS calls and at least as many as were timed (a
rechecked batch like any other), and both the verdict and the row's samples come from that batch alone: a
candidate that hid work only before it gains nothing, and one that hides it in every call is convicted there. A row
whose calls were set aside and then cleared says so (`note`), for review.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastkernels.checks import CaseFailure, shadowed_methods
from fastkernels.records import Status


class StreamEscape:
    """Collects every timed call's CallCheck per implementation and judges the candidate's afterwards."""

    # The lag quantile compared: the candidate's hidden work must show in at least 40% of its calls.
    ESCAPE_QUANTILE = 0.6
    # The candidate's lag at that quantile may exceed the baseline's by this much (ms) ...
    MARGIN_MS = 0.02
    # ... or by this fraction of its median event time, whichever is more: at most ~5% of its time can hide.
    MARGIN_FRACTION = 0.05
    # The fewest candidate calls a verdict of escaped work is drawn from.
    MIN_CALLS = 20

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.checks: dict[str, list[Any]] = {}
        self.set_aside: list[dict[str, list[Any]]] = []  # calls a confirmation batch replaced (start_confirmation)

    def observe(self, name: str, index: int, inputs: Any, output: Any) -> None:
        check = getattr(self.clock, "last_check", None)
        if check is not None:
            self.checks.setdefault(name, []).append(check)

    def _lag_at_quantile(self, name: str) -> float:
        lags = [c.lag_ms for c in self.checks.get(name, [])]
        return float(np.quantile(lags, self.ESCAPE_QUANTILE)) if lags else 0.0

    def lags(self) -> tuple[float, float] | None:
        """(baseline, candidate) lag at ESCAPE_QUANTILE, recorded in the row; None without a candidate's checks."""
        if not self.checks.get("candidate"):
            return None
        return self._lag_at_quantile("baseline"), self._lag_at_quantile("candidate")

    def _escaped(self) -> tuple[float, float, float] | None:
        """(candidate lag, baseline lag, candidate median event ms) where the candidate's lags exceed the margin."""
        candidate = self.checks.get("candidate", [])
        if not candidate:
            return None
        candidate_lag, baseline_lag = self._lag_at_quantile("candidate"), self._lag_at_quantile("baseline")
        event_ms = float(np.median([c.event_ms for c in candidate]))
        if candidate_lag - baseline_lag <= max(self.MARGIN_MS, self.MARGIN_FRACTION * event_ms):
            return None
        return candidate_lag, baseline_lag, event_ms

    def start_confirmation(self, side_streams_allowed: bool) -> int:
        """Where the rule would convict on the calls so far: set them aside (`set_aside`) and return how many calls
        a side the fresh confirmation batch needs (at least MIN_CALLS, and as many as were timed); else 0, and
        nothing changes. The caller times that batch next; its calls alone are then judged."""
        if side_streams_allowed or self._escaped() is None:
            return 0
        calls = max(self.MIN_CALLS, len(self.checks.get("candidate", [])))
        self.set_aside.append(self.checks)
        self.checks = {}
        return calls

    def note(self) -> str:
        """For the row's review where calls were set aside and the fresh batch cleared them, else ""."""
        if not self.set_aside:
            return ""
        earlier = sum(len(checks.get("candidate", [])) for checks in self.set_aside)
        return (f"stream escape: the lags of the first {earlier} candidate calls suggested work off the timed stream;"
                f" a fresh batch of {len(self.checks.get('candidate', []))} did not confirm it and gave the times")

    def verify(self, side_streams_allowed: bool) -> None:
        """Raise REWARD_HACK for a timer that lies, or for work that kept the device busy after the timed stream."""
        candidate = self.checks.get("candidate", [])
        if not candidate:
            return
        impossible = [c for c in candidate if c.event_ms > c.wall_ms * 1.01 + 0.005]
        if impossible:
            c = impossible[0]
            raise CaseFailure(Status.REWARD_HACK, f"timer tampering: an event interval of {c.event_ms:.3f} ms inside"
                                                  f" {c.wall_ms:.3f} ms of host wall time")
        if side_streams_allowed:
            return
        escaped = self._escaped()
        if escaped is None:
            return
        candidate_lag, baseline_lag, event_ms = escaped
        percent = round(100 * (1 - self.ESCAPE_QUANTILE))
        raise CaseFailure(
            Status.REWARD_HACK,
            f"work kept the device busy after the timed stream finished: in {percent}% of {len(candidate)} timed calls"
            f" the device stayed busy {candidate_lag:.3f} ms or more (the baseline's calls: {baseline_lag:.3f} ms;"
            f" the call itself {event_ms:.3f} ms): it ran on another stream or thread the timer does not see",
        )


def verify_escape(escape: StreamEscape, side_streams_allowed: bool, clock: Any, timed_calls: int) -> None:
    """StreamEscape.verify as the harness calls it, on an object candidate code may have reached: a method shadowed
    on it, or other than the `timed_calls` candidate CallChecks the caller counted itself where its own `clock`
    leaves one after every call (the CUDA clock), means calls were kept from the check (REWARD_HACK). Without the
    count a candidate that silenced `observe` would leave no checks, and `verify` passes an empty list."""
    shadowed = shadowed_methods(escape)
    expected = timed_calls if getattr(clock, "last_check", None) is not None else None
    checked = len(escape.checks.get("candidate", [])) if isinstance(escape.checks, dict) else -1
    if shadowed or (expected is not None and checked != expected):
        what = f"{', '.join(shadowed)} (a method) shadowed" if shadowed else \
            f"{max(checked, 0)} of the {expected} timed candidate calls were checked for work left on the device"
        raise CaseFailure(Status.REWARD_HACK, f"the harness's stream-escape state was changed while the candidate"
                                              f" ran: {what}")
    StreamEscape.verify(escape, side_streams_allowed)

"""The correctness checks of one case, each closing a known way to look right without being right.

- `run_rounds`: every implementation runs on every round of fresh inputs; the first round is repeated
  (`repeat_runs`) so a race that is right only sometimes fails; inputs must stay bitwise unchanged. It also says how
  much longer the first call took than the quickest later one: the shape's compile time (issue #3 leaves it out of
  the harness overhead and reports it).
- `check_precision`: the candidate's RMS error may not exceed `factor` x the production baseline's, so a kernel that
  quietly drops precision fails even where the fixed tolerance would pass it.
- `TimedRecheck`: every timed call gets fresh input values in place (a cache keyed on the tensor or its address can
  never hit), and a few randomly chosen timed candidate outputs of every batch are checked afterwards against fresh
  float64 references: an output right only while being checked is a REWARD_HACK. `time_rechecked` is the adaptive
  repetition that runs them, batch by batch, for eager calls and CUDA-graph replays alike.
- `BaselineTail`: those fresh-input checks, except that an output that misses the fixed tolerance where the
  production baseline, run on the same inputs, misses it too is judged against the baseline's own error instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import torch

from fastkernels.config import HarnessConfig, Tolerance
from fastkernels.correctness import Verdict, judge, unchanged
from fastkernels.inputs import generator, redrawn_inputs, refill_inputs
from fastkernels.manifest import Case, Manifest
from fastkernels.plan import one_line
from fastkernels.records import CallTimes, ErrorMetrics, Status
from fastkernels.timing import Clock, continuing, extend_until_tight, paired_count, time_interleaved

Inputs = dict[str, torch.Tensor]
# The judge process's answers (fastkernels.judge): an output of round i, or an output for given inputs.
JudgeRound = Callable[[int, Any], Verdict]
JudgeFresh = Callable[[Inputs, Any], Verdict]


class CaseFailure(Exception):
    """Ends a case early with a status and reason (and error metrics when values were compared)."""

    def __init__(self, status: Status, reason: str, metrics: ErrorMetrics | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.metrics = status, reason, metrics


def clone(inputs: Inputs) -> Inputs:
    return {name: tensor.clone() for name, tensor in inputs.items()}


@dataclass(frozen=True)
class RoundsPassed:
    """What `run_rounds` learned from an implementation that passed every round."""

    worst: ErrorMetrics | None  # the round with the largest RMS error against the oracle
    first_call_s: float  # wall seconds the first call took beyond the quickest later call (0 with a single call)


def run_rounds(
    module: Callable[..., Any], rounds: list[Inputs], judge_round: JudgeRound, mutates: list[str], who: str,
    repeat_runs: int,
) -> RoundsPassed:
    """Run `module` on every round (the first `repeat_runs` times); raise CaseFailure at the first wrong output.

    `judge_round` compares with the round's reference in the judge process; the worker never holds one. Each call is
    timed on the host clock from its inputs being ready to its work being done, so the first call's excess over the
    quickest later one is what the implementation spent once per shape: Dynamo tracing, Inductor and Triton
    compiling or loading from cache, autotuning, cuDNN's algorithm search, lazy module loading."""
    worst: ErrorMetrics | None = None
    seconds: list[float] = []
    schedule = [0] * repeat_runs + list(range(1, len(rounds)))
    for run, index in enumerate(schedule):
        inputs = rounds[index]
        given = clone(inputs)
        on_gpu = any(t.is_cuda for t in given.values())
        if on_gpu:
            torch.cuda.synchronize()  # the clones are done before the call's clock starts
        started = time.perf_counter()
        try:
            output = module(**given)
        except Exception as error:  # noqa: BLE001 - whatever the implementation raises is its failure
            raise CaseFailure(Status.RUNTIME_ERROR, f"{who} raised in round {index}: {one_line(error)}") from None
        if on_gpu:
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - started)
        verdict = judge_round(index, output)
        del output
        repeat = f", repeat {run}" if index == 0 and run > 0 else ""
        if not verdict.passed:
            raise CaseFailure(Status.INCORRECT, f"{who}, round {index}{repeat}: {verdict.reason}", verdict.metrics)
        modified = unchanged(inputs, given, mutates)
        if modified:
            raise CaseFailure(Status.INCORRECT, f"{who}, round {index}: {modified}", verdict.metrics)
        if verdict.metrics is not None and (worst is None or verdict.metrics.rms_abs > worst.rms_abs):
            worst = verdict.metrics
    first_call_s = max(0.0, seconds[0] - min(seconds[1:])) if len(seconds) > 1 else 0.0
    return RoundsPassed(worst, first_call_s)


def check_precision(
    candidate: ErrorMetrics | None, baselines: list[ErrorMetrics | None], tolerance: Tolerance, factor: float,
    floor: float,
) -> None:
    """Fail a candidate whose RMS error exceeds factor x the least accurate correct baseline's (or the floor)."""
    reference = [m.rms_abs for m in baselines if m is not None]
    if candidate is None or not reference:
        return
    bound = max(factor * max(reference), floor * tolerance.atol)
    if candidate.rms_abs > bound:
        raise CaseFailure(
            Status.INCORRECT,
            f"precision: RMS error {candidate.rms_abs:.3g} exceeds {factor:g} x the production baseline's"
            f" {max(reference):.3g} (a lower-precision computation than production's)",
            candidate,
        )


def recheck_count(rechecks: int, iterations: int, cover: int = 0) -> int:
    """How many candidate calls a batch of `iterations` timed iterations rechecks (at least one call of each of
    `cover` clusters, where the batch has that many)."""
    return min(max(rechecks, cover), paired_count(iterations))  # time_interleaved runs iterations in pairs


class RecheckJudge(Protocol):
    """The judge's side of the timed rechecks (judge.JudgeClient over its pipe; recheck_ledger.py holds the state)."""

    def start_recheck_batch(self, count: int, wanted: int, classes: int) -> None: ...
    def issue_seed(self, index: int) -> int: ...
    def unchecked_seed(self) -> int: ...
    def unchecked_done(self) -> bool: ...
    def decide(self, index: int) -> bool: ...
    def hand_in(self, index: int, output: Any) -> bool | Verdict: ...
    def verify_rechecks(self) -> tuple[int, int, list[tuple[int, int, Verdict]]]: ...
    def recheck_accounts(self, checked: bool) -> list[str]: ...
    def record_sample(self, name: str, milliseconds: float) -> None: ...
    def timing_record(self) -> dict[str, list[float]]: ...


class TimedRecheck:
    """`prepare`/`observe` hooks for time_interleaved: fresh inputs per call, random rechecks of candidate outputs.

    Every batch of timed calls (the first `iterations`, then each extra batch of adaptive repetition) has `rechecks`
    of its candidate calls picked at random over the whole batch and judged when the batch is done (`verify`). The
    judge process holds what decides a recheck (recheck_ledger.py): it issues each candidate call's input seed before
    the call (this worker only refills the inputs with it), decides after the call has returned whether it is
    rechecked, takes the output of a picked call at once, and judges it on inputs it rebuilds from the seed it
    issued. So while a call runs nothing says whether it will be rechecked, and nothing in this process (which
    candidate code shares) decides which inputs a recheck uses. Seeds and picks come from fresh OS entropy, not the
    run's seed, so a candidate cannot compute them in advance (the correctness rounds stay reproducible). A
    candidate wrong in a share f of its calls escapes a batch with probability (1 - f)^rechecks, and to carry the
    reported median it must be wrong in about half of them: with 5, under 1 in 32 per batch. No batch goes unchecked,
    so being right only until the extra batches begin does not pay.

    With `cover` K (CUDA-graph replays: iteration i replays capture i mod K), the first batch picks one call of each
    capture, at random among that capture's calls, and more at random up to `rechecks`: every capture is judged on a
    timed replay, and a candidate wrong in a share f of the batch still escapes with probability at most (1 - f)^K.
    Candidate code can still keep this object from asking (skip `observe`): the judge's count of outputs handed in,
    checked against the count asked for, catches that.

    SYMMETRIC: every call of the other implementations (the baseline) makes the same two round trips to the judge,
    one before it (`unchecked_seed`, its inputs' seed) and one after (`unchecked_done`), so both sides of a pair reach
    the device after the same host path. With the round trips on the checked side only (twenty-seventh to
    twenty-ninth sessions' noop passes, H200) 52-61% of the rows read below 1 (means 0.9994-0.9998, eager and
    replayed) and the candidate's sync lag ran 0.5-1.3 us over the baseline's, against 48-49%, means 1.0000-1.0002
    and no difference in the last pass before (the worker held the picks then; `measure.py` prints these lines).
    """

    def __init__(
        self, manifest: Manifest, case: Case, device: str, iterations: int, rechecks: int,
        flush: Callable[[], None] | None, ledger: RecheckJudge, checked: str = "candidate", cover: int = 0,
    ) -> None:
        self.manifest, self.case, self.device, self.flush = manifest, case, device, flush
        self.checked, self.rechecks, self.cover, self.ledger = checked, rechecks, cover, ledger
        self.batch = -1
        self.picked: set[int] = set()  # this batch's picks, as the judge answered them (a record, never a forecast)
        # this process's copies of the picked outputs, for BaselineTail's second look (its comparison with the
        # baseline's output runs here): a second copy beside the judge's, at most `rechecks` a batch
        self._kept: dict[int, Any] = {}
        self._refused: dict[int, Verdict] = {}  # picked outputs that were not plain tensors
        self._like: Inputs = {}  # the checked calls' input tensors: what rebuilt inputs are shaped like
        self._checked_calls = 0  # this batch's calls of the checked implementation (none: a baseline-only timing)
        self.start_batch(iterations)

    def _ask(self, request: Callable[..., Any], *args: Any) -> Any:
        """A request to the judge; its failure (the judge died) ends the case as a benchmark defect."""
        from fastkernels.judge import JudgeError  # judge.py imports oracle_graph, which imports graphs, then this

        try:
            return request(*args)
        except JudgeError as error:
            raise CaseFailure(Status.BASELINE_ERROR, str(error)) from None

    def start_batch(self, iterations: int) -> None:
        """The next batch of `iterations` timed calls: its own input seeds and its own picks."""
        self.batch += 1
        count = paired_count(iterations)
        cover = min(self.cover, count) if self.batch == 0 else 0
        self.picked, self._kept, self._refused, self._checked_calls = set(), {}, {}, 0
        self._ask(self.ledger.start_recheck_batch, count, recheck_count(self.rechecks, iterations, cover), cover)

    def prepare(self, name: str, index: int, inputs: Inputs) -> None:
        if name == self.checked:
            seed = self._ask(self.ledger.issue_seed, index)
            self._like, self._checked_calls = inputs, self._checked_calls + 1
        else:  # the same round trip as the checked side's (SYMMETRIC)
            seed = self._ask(self.ledger.unchecked_seed)
        refill_inputs(self.manifest, self.case, inputs, generator(self.device, seed))
        if self.flush is not None:
            self.flush()

    def observe(self, name: str, index: int, inputs: Inputs, output: Any) -> None:
        if name != self.checked:
            self._ask(self.ledger.unchecked_done)  # the same round trip as the checked side's (SYMMETRIC)
            return
        if not self._ask(self.ledger.decide, index):  # drawn now, after the call
            return
        self.picked.add(index)
        taken = self._ask(self.ledger.hand_in, index, output)
        if isinstance(taken, Verdict):
            self._refused[index] = taken
        else:
            self._kept[index] = _detach_clone(output)

    def _where(self, index: int) -> str:
        where = f"timed call {index}" + (f" of extra batch {self.batch}" if self.batch else "")
        return where + (f" (capture {index % self.cover})" if self.cover and not self.batch else "")

    def verify(self, judge_fresh: JudgeFresh, expected: int) -> None:
        """The judge's verdicts on this batch's picked outputs. `expected` is how many picks the caller asked for,
        counted outside this object and the judge: a batch whose calls were not all decided in order, or whose
        picked outputs were not all handed in, has fewer. A failed verdict gets BaselineTail's second look (the
        production baseline on the same inputs, rebuilt here from the seed the judge reveals after the batch)."""
        kept, refused = self._kept, self._refused
        self._kept, self._refused = {}, {}
        wanted, taken, failures = self._ask(self.ledger.verify_rechecks)
        wanted = max(expected, wanted if self._checked_calls else 0)
        if refused:
            index, verdict = next(iter(refused.items()))
            raise CaseFailure(Status.REWARD_HACK, f"{self._where(index)} returned a wrong output though the checked"
                                                  f" calls were right: {verdict.reason}")
        if taken < wanted:
            raise CaseFailure(
                Status.REWARD_HACK,
                f"{taken} of the {wanted} rechecks of timed calls were taken"
                + (f" in extra batch {self.batch}" if self.batch else "")
                + ": the harness's recheck state was changed while the candidate ran")
        for index, seed, verdict in failures:
            second_look = getattr(judge_fresh, "second_look", None)
            if second_look is not None and index in kept:
                inputs = redrawn_inputs(self.manifest, self.case, self._like, generator(self.device, seed))
                verdict = second_look(inputs, kept[index], verdict)
            if not verdict.passed:
                raise CaseFailure(
                    Status.REWARD_HACK,
                    f"{self._where(index)} returned a wrong output though the checked calls were right:"
                    f" {verdict.reason}",
                    verdict.metrics,
                )


def shadowed_methods(obj: Any) -> list[str]:
    """Instance attributes of `obj` that hide a method of its class: code that reached the object replaced what the
    harness calls on it."""
    return sorted(name for name in vars(obj) if callable(getattr(type(obj), name, None)))


# what a TimedRecheck is set up with and keeps for a timing phase (time_rechecked pins it), and what each decides
PINNED = {"ledger": "the judge the rechecks ask", "checked": "the implementation rechecked",
          "rechecks": "how many calls are rechecked", "cover": "the captures every first batch rechecks",
          "manifest": "what inputs are drawn from", "case": "what inputs are drawn from",
          "device": "where inputs are drawn", "flush": "the cache flush before every call"}


def time_rechecked(
    calls: dict[str, Callable[[Any], Any]], sets: Sequence[Any], clock: Clock, recheck: TimedRecheck,
    judge_fresh: JudgeFresh, harness: HarnessConfig, device: str, warmup: int, iterations: int, label: str,
    prepare: Callable[[str, int, Any], None], observe: Callable[[str, int, Any, Any], None],
    confirmation: Callable[[], int] = lambda: 0, settled: Callable[[], bool] | None = None,
) -> tuple[dict[str, tuple[float, ...]], CallTimes, float]:
    """Adaptive repetition with rechecks, for eager calls and graph replays alike: `iterations` interleaved timings
    over the rotated `sets`, then doubling batches until the speedup's interval is tight (timing.extend_until_tight);
    every batch has its own picks, and its picked candidate outputs (kept by `observe`, which should pass them on
    to `recheck.observe`) are judged when it ends. Returns the samples, the calls' record (`call_times`) and the
    seconds the judge's rechecks took. `confirmation()`, asked once the repetition ends, may ask for a fresh batch
    (StreamEscape.start_confirmation: a verdict of escaped work must hold on it), which then replaces every call
    timed before it: the samples and the record are that batch's alone, its input sets rotated from the first.
    `settled()` ends
    the repetition early where more calls cannot narrow what the interval measures (timing.host_bound_settled).

    What `recheck` was set up with (the judge it asks, the implementation it checks, ...: PINNED), and every setting
    of `judge_fresh` where it has any (BaselineTail's baseline and factor, which decide its second look), are pinned
    here before any timed call and checked before every `prepare` and `observe` and at the end of every batch:
    candidate code that changes them (a stand-in that answers the judge's questions itself, the baseline made the
    checked implementation, a factor that lets anything through) or shadows one of their methods is a REWARD_HACK at
    the next of them. The judge's own account of the phase (every batch verified, every timed candidate call asked
    about: recheck_ledger.accounts) is asked through the pinned judge when the phase ends, so a worker kept from
    asking is found out too. Every sample goes to the judge the moment the clock measures it (before candidate code
    runs again), and the samples returned are the judge's record, as tuples: candidate code that rewrote the
    harness's sample lists through its frames read 7.6-8.0x on rms_norm's CPU cases (2026-12-03)."""
    watched = [("recheck state", recheck, {name: recheck.__dict__.get(name) for name in PINNED})]
    if isinstance(getattr(judge_fresh, "__dict__", None), dict):  # BaselineTail: its baseline and factor decide
        watched.append(("fresh-input judge", judge_fresh, dict(vars(judge_fresh))))
    judge = recheck.ledger
    first: list[str] = []  # which implementation ran first in each iteration; its length counts the iterations
    rechecked: list[int] = []
    judging = [0.0]

    def pinned() -> None:
        for what, watched_object, settings in watched:
            state = vars(watched_object)
            changed = [name + (f" ({PINNED[name]})" if watched_object is recheck else "")
                       for name, value in settings.items() if state.get(name) is not value]
            changed += [f"{name} (a method) shadowed" for name in shadowed_methods(watched_object)]
            if changed:
                raise CaseFailure(Status.REWARD_HACK, f"the harness's {what} was changed while the candidate ran: "
                                  + ", ".join(changed))

    def prepare_pinned(name: str, index: int, inputs: Any) -> None:
        pinned()
        prepare(name, index, inputs)

    def observe_pinned(name: str, index: int, inputs: Any, output: Any) -> None:
        pinned()
        observe(name, index, inputs, output)

    def batch(count: int, warm: int, rotation_from: int | None = None) -> dict[str, list[float]]:
        done = len(first)
        if done:
            recheck.start_batch(count)
        rotation = continuing(sets, done if rotation_from is None else rotation_from)
        added = time_interleaved(calls, rotation, clock, warm, count, label, prepare=prepare_pinned,
                                 observe=observe_pinned, first_log=first, record=judge.record_sample)
        pinned()
        if "candidate" in calls:  # the picks exist only now: each was drawn after its call
            rechecked.extend(done + index for index in sorted(recheck.picked))
        started = time.perf_counter()
        cover = recheck.cover if not done else 0
        recheck.verify(judge_fresh, recheck_count(harness.rechecks, count, cover) if "candidate" in calls else 0)
        judging[0] += time.perf_counter() - started
        return added

    started = time.perf_counter()  # the time cap holds the phase's wall time: pads, flushes and rechecks count
    samples = extend_until_tight(batch(iterations, warmup), lambda count: batch(count, 0), harness.target_ci,
                                 harness.iteration_cap(device), harness.max_timing_s, harness.seed,
                                 clusters=len(sets), elapsed=lambda: time.perf_counter() - started,
                                 settled=settled)
    set_aside = 0  # iterations a confirmation batch replaced
    if (fresh := confirmation()) > 0:
        set_aside = len(first)
        samples = batch(fresh, 0, rotation_from=0)
    from fastkernels.judge import JudgeError  # judge.py imports this module through oracle_graph and graphs

    try:
        problems = judge.recheck_accounts("candidate" in calls)
        measured = judge.timing_record()
    except JudgeError as error:  # the judge died: a benchmark defect, as TimedRecheck._ask says
        raise CaseFailure(Status.BASELINE_ERROR, str(error)) from None
    if any(list(samples[name]) != measured.get(name, [])[set_aside:] for name in samples):
        raise CaseFailure(Status.REWARD_HACK, "the timing samples differ from what the clock measured (the judge's"
                          " record of every sample, sent as it was taken): they were changed while the candidate ran")
    if problems:
        raise CaseFailure(Status.REWARD_HACK, "the judge's account of the timed calls does not add up ("
                          + "; ".join(problems) + "): the harness's recheck state was changed while the candidate ran")
    record = CallTimes(baseline_ms=samples["baseline"], candidate_ms=samples.get("candidate", []),
                       first=first[set_aside:], rechecked=[i - set_aside for i in rechecked if i >= set_aside],
                       input_sets=len(sets))
    # tuples: candidate code runs again after this phase (the graph captures) and could rewrite lists in place
    return {name: tuple(values) for name, values in samples.items()}, record, judging[0]


class BaselineTail:
    """A `JudgeFresh` that does not blame the candidate for the tolerance's own tail.

    Fresh-input checks (timed rechecks, every graph capture) draw many more inputs than the correctness rounds, and
    a fixed tolerance that production's own rounding misses once in a few million elements then fails an honest
    candidate: on the H200 (2026-11-30) the noop candidate of mamba2_ssd, FLA's kernel itself, missed atol 0.1 on 1
    of 33 million elements under one of 8 graph captures and was called a REWARD_HACK. So where the candidate's
    output fails, the production baseline runs on the same inputs: if it fails too, the candidate passes when its
    worst ratio (max error over the tolerance) is at most `factor` x the baseline's, the bound the calibrated RMS check
    uses, and every one of its outputs is within `factor` x the tolerance of the baseline's output; such passes are
    counted in `note()` for the row's review. An output that is wrong (a stale or skipped result errs by orders of
    magnitude, not by production's rounding) still fails.
    """

    def __init__(self, judge_fresh: JudgeFresh, baseline: Callable[..., Any] | None, baseline_name: str,
                 factor: float) -> None:
        self.judge_fresh, self.baseline, self.baseline_name, self.factor = judge_fresh, baseline, baseline_name, factor
        self.tails: list[tuple[float, float]] = []  # (candidate, baseline) worst ratios of the inputs let through

    def __call__(self, inputs: Inputs, output: Any) -> Verdict:
        return self.second_look(inputs, output, self.judge_fresh(inputs, output))

    def second_look(self, inputs: Inputs, output: Any, verdict: Verdict) -> Verdict:
        """`verdict`, the judge's on `output` for `inputs`, unless it failed where the baseline fails too (above)."""
        if verdict.passed or verdict.metrics is None or self.baseline is None:
            return verdict
        given = clone(inputs)
        try:
            production = self.baseline(**given)
        except Exception:  # noqa: BLE001 - the baseline passed its rounds; the candidate's verdict then stands
            return verdict
        if any(t.is_cuda for t in given.values()):
            torch.cuda.synchronize()
        own = self.judge_fresh(inputs, production)
        if own.passed or own.metrics is None:
            return verdict
        candidate_ratio, baseline_ratio = verdict.metrics.worst_ratio, own.metrics.worst_ratio
        if candidate_ratio > self.factor * baseline_ratio:
            return Verdict(f"{verdict.reason} (the baseline {self.baseline_name} missed the tolerance on"
                           f" these inputs too, worst ratio {baseline_ratio:.3g}: under 1/{self.factor:g} of this)",
                           verdict.metrics)
        # The judge stops at the first failing output; every output must still agree with production's here.
        agreement = judge(output, production, production, self.factor * verdict.metrics.atol,
                          self.factor * verdict.metrics.rtol)
        if not agreement.passed:
            return Verdict(f"{verdict.reason} (and, where the baseline {self.baseline_name} missed the tolerance too,"
                           f" it differs from the baseline's output: {agreement.reason})", verdict.metrics)
        self.tails.append((candidate_ratio, baseline_ratio))
        return Verdict("", verdict.metrics)

    def note(self) -> str:
        """The review note when any output passed this way, else ""."""
        if not self.tails:
            return ""
        return (f"tolerance tail: on {len(self.tails)} fresh input(s) the baseline {self.baseline_name}"
                f" itself missed the fixed tolerance (worst ratio up to {max(b for _, b in self.tails):.3g}) and the"
                f" candidate's error stayed within {self.factor:g}x of it (up to {max(c for c, _ in self.tails):.3g}):"
                " the manifest's tolerance is tighter than production's rounding")


def _detach_clone(output: Any) -> Any:
    if isinstance(output, torch.Tensor):
        return output.detach().clone() if type(output) is torch.Tensor else output
    if isinstance(output, (tuple, list)):
        return type(output)(_detach_clone(item) for item in output)
    return output

"""One case of one task: check every implementation against the float64 oracle, then time baseline vs candidate.

The oracle lives in the judge process (judge.py); this worker process only ever sends it outputs to judge.
Order of work, per case:
1. reference weights and `correctness_rounds` fresh input sets; the judge rebuilds both from the seeds and holds
   the oracle's outputs and the template (the eager module in the case dtype: structure, shapes, dtypes);
2. every baseline implementation is checked exactly like a candidate; incorrect ones are dropped, and a case whose
   baselines all fail is a BASELINE_ERROR (the benchmark's defect, never scored against the agent);
3. the candidate is checked on every round and repeat (checks.py), then for precision against the baselines;
4. with several correct baselines a short interleaved timing picks the fastest (baseline_choice.py); then the
   chosen baseline and the candidate are timed interleaved, every call on freshly refilled inputs with the cache
   flushed, and a few timed candidate outputs are rechecked against the oracle afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch

from fastkernels.baseline_choice import choose_baseline
from fastkernels.build import build, reference_state
from fastkernels.call_memory import CallFailed, sides_call_mib
from fastkernels.clock_policy import throttled
from fastkernels.checks import (
    CaseFailure, BaselineTail, RoundsPassed, TimedRecheck, check_precision, run_rounds, time_rechecked,
)
from fastkernels.compile_events import RECOMPILE_LIMIT_HIT, describe, events_since, inductor_counters
from fastkernels.config import HardwareProfile, HarnessConfig
from fastkernels.graphs import graph_fields
from fastkernels.inputs import generator, make_inputs, stream_seed
from fastkernels.instances import build_order, instance_count, rotating_call
from fastkernels.integrity import Integrity
from fastkernels.judge import JudgeClient, JudgeError
from fastkernels.phases import phase
from fastkernels.placement import Spacers
from fastkernels.plan import Impl, TaskPlan, Unusable, one_line
from fastkernels.records import ResultRow, Status
from fastkernels.roofline import roofline_fields
from fastkernels.stream_escape import StreamEscape, verify_escape
from fastkernels.timing import (Clock, host_bound_settled, host_latency_note, pad_note, paired_speedup, speedup_ci95,
                                summarize)

Inputs = dict[str, torch.Tensor]


@dataclass
class CaseContext:
    plan: TaskPlan
    case_name: str
    device: str
    harness: HarnessConfig
    profile: HardwareProfile
    clock: Clock
    flush: Callable[[], None] | None
    row_base: dict[str, Any]
    judge: JudgeClient = None  # type: ignore[assignment]  # the judge process (always set by the worker)
    integrity: Integrity | None = None
    read_clocks: Callable[[], Any] | None = None  # NVML snapshot around the timed loop (GPU only)
    spacers: Spacers | None = None  # harness.placement_spacer_mb: set by _evaluate, released when the case ends


def evaluate_case(ctx: CaseContext) -> ResultRow:
    """The result row of one case; never raises for anything an implementation does."""
    try:
        return _evaluate(ctx)
    except CaseFailure as failure:
        refused = ctx.integrity.refusals() if ctx.integrity is not None else []
        if refused and failure.status is not Status.REWARD_HACK:  # it failed on what the guard refused it
            reason = f"the audit guard refused candidate code {refused[0]}; then {failure.reason}"
            return ResultRow(**ctx.row_base, status=Status.REWARD_HACK, reason=reason)
        return ResultRow(**ctx.row_base, status=failure.status, reason=failure.reason, candidate_error=failure.metrics)
    except torch.cuda.OutOfMemoryError as error:
        return ResultRow(**ctx.row_base, status=Status.RUNTIME_ERROR, reason=one_line(error))
    finally:
        if ctx.spacers is not None:
            ctx.spacers.release()
        if ctx.integrity is not None:
            for impl in ctx.plan.baselines:
                for name in (f"baseline {impl.name}", *(f"baseline {impl.name} #{n}" for n in
                                                         range(2, ctx.harness.instances + 1))):
                    ctx.integrity.unwatch(name)
        if ctx.device == "cuda":
            torch.cuda.empty_cache()


def _evaluate(ctx: CaseContext) -> ResultRow:
    plan, harness = ctx.plan, ctx.harness
    manifest, case = plan.manifest, plan.manifest.case(ctx.case_name)
    tolerance = manifest.tolerance.get(case.dtype) or harness.tolerance[case.dtype]
    label = f"{manifest.name}/{case.name}"
    try:  # the judge builds its oracle while this process builds the same weights
        ctx.judge.start_case(case.name, tolerance.atol, tolerance.rtol, manifest.output_tolerances(case.dtype))
    except JudgeError as error:
        raise CaseFailure(Status.BASELINE_ERROR, f"the judge is gone: {error}") from None
    state = reference_state(manifest, case, plan.eager.cls, plan.eager.components, ctx.device, harness.seed)
    spacers = ctx.spacers = Spacers(harness.placement_spacer_mb, ctx.device)
    phase(f"{label}: weights built")
    try:
        ctx.judge.settle()
        oracle = ctx.judge.oracle_info()
    except JudgeError as error:
        raise CaseFailure(Status.BASELINE_ERROR, f"the oracle could not be built: {error}") from None
    phase(f"{label}: the judge's oracle ready ({_oracle_note(oracle)})")
    judge_round, judge_fresh = _asking(ctx.judge.judge_round), _asking(ctx.judge.judge_fresh)
    with torch.no_grad():
        rounds = []
        for r in range(harness.correctness_rounds):
            gen = generator(ctx.device, stream_seed(harness.seed, manifest.name, case.name, "round", r))
            rounds.append(make_inputs(manifest, case, ctx.device, gen))
        baselines, baseline_errors, alternatives, rejected = {}, {}, {}, []
        compile_s: dict[str, float] = {}  # first calls beyond a steady call: compiling, autotuning (checks.py)
        compile_events: dict[str, dict[str, int]] = {}  # Inductor's work in each one's first calls (compile_events.py)
        gone_eager: list[str] = []
        alternatives.update({name: f"unavailable: {why}" for name, why in plan.unavailable.items()})
        for impl in plan.baselines:
            try:
                module = _instantiate(impl, ctx, state, Status.BASELINE_ERROR, impl.name)
                fallback = _fallback_reason(module, rounds[0])
                if fallback:  # its library's kernel would not run: timing it would credit the library with another path
                    alternatives[impl.name] = f"not used: {fallback} (its forward would run a fallback path here)"
                    continue
                passed, events = _first_calls(module, rounds, judge_round, manifest.mutates, impl.name, harness)
                baseline_errors[impl.name], compile_s[impl.name] = passed.worst, round(passed.first_call_s, 3)
                if events:
                    compile_events[impl.name] = dict(events)
                if RECOMPILE_LIMIT_HIT in events:  # Dynamo gave up on it: some of its calls run eagerly
                    gone_eager.append(impl.name)
                baselines[impl.name] = module
            except CaseFailure as failure:
                alternatives[impl.name] = f"rejected: {failure.reason}"
                rejected.append(impl.name)
        if not baselines:
            reasons = "; ".join(f"{k}: {v}" for k, v in alternatives.items())
            raise CaseFailure(Status.BASELINE_ERROR, f"no baseline implementation is correct ({reasons})")
        if isinstance(plan.candidate, Unusable) and plan.candidate.status is not Status.NOT_ATTEMPTED:
            raise CaseFailure(plan.candidate.status, plan.candidate.reason)
        compiles = [f"{name}: {describe(events)}" for name, events in compile_events.items()]
        inductor = f" (Inductor: {'; '.join(compiles)})" if compiles else ""
        phase(f"{label}: {len(baselines)} baseline(s) checked{inductor}")
        if ctx.integrity is not None:  # instances a candidate could reach and slow down without patching a class
            for name, module in baselines.items():
                ctx.integrity.watch(f"baseline {name}", module)
        sets = _timing_sets(ctx, rounds)
        eager_timed = None
        if harness.time_eager and ctx.row_base.get("baseline") == "production":
            eager_timed = _instantiate(plan.eager, ctx, state, Status.BASELINE_ERROR, "eager")
        chosen, times = choose_baseline(ctx, baselines, sets, eager_timed)
        del eager_timed
        alternatives.update(times)
        phase(f"{label}: baseline {chosen} chosen")
        chosen_impl = next(impl for impl in plan.baselines if impl.name == chosen)
        candidate_impl = plan.candidate if isinstance(plan.candidate, Impl) else None
        if plan.candidate is None:  # noop: the chosen baseline again, as a separate instance
            candidate_impl = chosen_impl
        candidate, metrics, candidate_compile = None, None, ""
        factor = manifest.calibration_factor or harness.calibration_factor
        fresh = BaselineTail(judge_fresh, baselines[chosen], chosen, factor)
        if candidate_impl is not None:
            candidate = _instantiate(candidate_impl, ctx, state, Status.RUNTIME_ERROR, "candidate")
            _verify_integrity(ctx, "while the candidate was built")
            passed, events = _first_calls(candidate, rounds, judge_round, manifest.mutates, "candidate", harness)
            metrics, compile_s["candidate"] = passed.worst, round(passed.first_call_s, 3)
            candidate_compile = f" (Inductor: {describe(events)})" if events else ""
            if events:
                compile_events["candidate"] = dict(events)
            _verify_integrity(ctx, "while the candidate ran")
            check_precision(metrics, list(baseline_errors.values()), tolerance, factor, harness.calibration_floor)
        checked = {"baseline": (chosen_impl, baselines[chosen]), "candidate": (candidate_impl, candidate)}
        sides = _more_instances(ctx, checked, state, rounds, judge_round, len(sets))
        del rounds
        placed = f" ({spacers.describe()})" if spacers.sizes_mb else ""
        phase(f"{label}: candidate checked{candidate_compile}{placed}")
        memory = _call_memory(sides, sets[0]) if ctx.device == "cuda" else None
        calls = {name: rotating_call(side, sets) for name, side in sides.items()}
        recheck = TimedRecheck(manifest, case, ctx.device, harness.iterations, harness.rechecks, ctx.flush,
                               ctx.judge)
        escape = StreamEscape(ctx.clock)
        clocks_before = ctx.read_clocks() if ctx.read_clocks is not None else None
        try:
            samples, call_times, recheck_s = time_rechecked(
                calls, sets, ctx.clock, recheck, fresh, harness, ctx.device, harness.warmup, harness.iterations,
                label, recheck.prepare, _observing(recheck, escape),
                lambda: escape.start_confirmation("side_streams" in manifest.allow),
                settled=lambda: host_bound_settled(escape.checks))
        except CaseFailure:
            raise
        except Exception as error:  # noqa: BLE001 - failing only while timed is still the candidate's failure
            raise CaseFailure(Status.RUNTIME_ERROR, f"during timing: {one_line(error)}") from None
        clocks_after = ctx.read_clocks() if ctx.read_clocks is not None else None
        phase(f"{label}: timed ({len(samples['baseline'])} pairs, {recheck_s:.2f} s of it judging rechecks"
              f"{pad_note(ctx.clock, label)})")
        _verify_integrity(ctx, "while the candidate was timed")
        verify_escape(escape, "side_streams" in manifest.allow, ctx.clock, len(samples.get("candidate", ())))
        sync_lag_ms = escape.lags()
        host_note = host_latency_note(escape.checks, harness.launch_pad_max_us)
        escape_note = escape.note()
        graph = {}
        if ctx.device == "cuda" and harness.cuda_graphs:
            by_speed = sorted((t, name) for name, t in times.items() if name in baselines and name != chosen)
            graph = graph_fields(manifest, case, sides, sets[0], fresh, ctx.judge, ctx.clock,  # instances in turn
                                 ctx.flush, harness.warmup, harness.iterations, harness, baseline_name=chosen,
                                 fallbacks=[(name, baselines[name]) for _, name in by_speed])
            _verify_integrity(ctx, "during CUDA-graph timing")
            phase(f"{label}: graphs timed")
        output = calls["baseline"](sets[0])
    base = summarize(samples["baseline"])
    fields: dict[str, Any] = dict(
        instances=len(sides["baseline"]),
        baseline_impl=chosen, baseline_alternatives=alternatives, baseline_ms=base.median_ms,
        baseline_components=next(dict(i.component_impls) for i in plan.baselines if i.name == chosen),
        baseline_spread=base.spread, samples=len(samples["baseline"]), baseline_error=baseline_errors[chosen],
        timing=ctx.clock.name, sync_lag_ms=sync_lag_ms, compile_s=compile_s, compile_events=compile_events,
        call_mib=memory, **graph,
    )
    if ctx.harness.keep_call_times:
        fields["call_times"] = call_times
    if clocks_before is not None and clocks_after is not None:
        fields["throttled"] = throttled(clocks_before, clocks_after)
        fields["sm_mhz"] = (clocks_before.sm_mhz, clocks_after.sm_mhz)
    production = ctx.row_base.get("baseline") == "production"
    notes = _weaker_baseline_notes(plan, rejected, ctx.device, chosen) if production else []
    if fresh.note():
        notes.append(fresh.note())
    if host_note:
        notes.append(host_note)
    if escape_note:
        notes.append(escape_note)
    if chosen in gone_eager:
        notes.append(f"the baseline {chosen} hit Dynamo's recompile limit: some of its calls ran uncompiled")
    if candidate is None:
        fields["review"] = "; ".join(notes)
        roofline = roofline_fields(manifest, case, ctx.profile, sets[0], output, state, base.median_ms, None)
        reason = plan.candidate.reason if isinstance(plan.candidate, Unusable) else ""
        return ResultRow(**ctx.row_base, **fields, **roofline, status=Status.NOT_ATTEMPTED, reason=reason)
    cand = summarize(samples["candidate"])
    roofline = roofline_fields(manifest, case, ctx.profile, sets[0], output, state, base.median_ms, cand.median_ms)
    speedup = paired_speedup(samples["baseline"], samples["candidate"])
    if speedup > harness.review_speedup and production:
        notes.append(f"speedup {speedup:.1f}x over the production baseline exceeds {harness.review_speedup:g}x")
    if roofline.get("implausible"):
        notes.append("faster than the physical floor (bytes / peak bandwidth, FLOPs / peak rate)")
    fields["review"] = "; ".join(notes)
    return ResultRow(
        **ctx.row_base, **fields, **roofline, status=Status.PASSED, candidate_ms=cand.median_ms,
        candidate_spread=cand.spread, speedup=speedup,
        speedup_ci95=speedup_ci95(samples["baseline"], samples["candidate"], seed=harness.seed,
                                  clusters=len(sets)),
        candidate_error=metrics,
    )


def _first_calls(
    module: Any, rounds: list[Inputs], judge_round: Callable[..., Any], mutates: list[str], who: str,
    harness: HarnessConfig,
) -> tuple[RoundsPassed, dict[str, int]]:
    """The correctness rounds (checks.run_rounds), and what Inductor did meanwhile (compile_events.events_since)."""
    before = inductor_counters()
    passed = run_rounds(module, rounds, judge_round, mutates, who, harness.repeat_runs)
    return passed, events_since(before)


def _more_instances(
    ctx: CaseContext, checked: dict[str, tuple[Impl | None, torch.nn.Module | None]], state, rounds: list[Inputs],
    judge_round: Callable[..., Any], sets: int,
) -> dict[str, list[torch.nn.Module]]:
    """The instances each side's timed calls rotate over (harness.instances, fastkernels.instances): the checked one
    of each side (`checked`: side -> (implementation, instance), a side without an instance left out) first, then
    extra ones from the same weights, the side built first alternating; an extra candidate instance passes the
    correctness rounds first."""
    sides = {side: [module] for side, (_, module) in checked.items() if module is not None}
    for number in range(2, instance_count(ctx.harness.instances, state, sets, len(sides), ctx.device) + 1):
        for side in build_order(sides, number):  # the side built first alternates (instances.py)
            instances = sides[side]
            impl = checked[side][0]
            assert impl is not None  # a side with an instance was built from an implementation
            who = f"{'candidate' if side == 'candidate' else impl.name} #{number}"
            status = Status.RUNTIME_ERROR if side == "candidate" else Status.BASELINE_ERROR
            module = _instantiate(impl, ctx, state, status, who)
            if side == "candidate":
                run_rounds(module, rounds, judge_round, ctx.plan.manifest.mutates, who, ctx.harness.repeat_runs)
                _verify_integrity(ctx, f"while candidate instance #{number} ran")
            elif ctx.integrity is not None:
                ctx.integrity.watch(f"baseline {impl.name} #{number}", module)
            instances.append(module)
    return sides


def _call_memory(sides: dict[str, list[torch.nn.Module]], inputs: Inputs) -> tuple[float, float | None]:
    """Each side's `call_memory.sides_call_mib`; a call that fails here fails the case as it would while timed, as
    the baseline's failure or the candidate's."""
    try:
        return sides_call_mib(sides, inputs)
    except CallFailed as failed:
        status = Status.BASELINE_ERROR if failed.side == "baseline" else Status.RUNTIME_ERROR
        cause = one_line(failed.__cause__) if failed.__cause__ is not None else "it raised"
        raise CaseFailure(status, f"the {failed.side}'s call, while its memory was measured: {cause}") from None


def _observing(recheck: TimedRecheck, escape: StreamEscape) -> Callable[[str, int, Inputs, Any], None]:
    """A timed call's output to the rechecks, its CallCheck to the stream-escape check."""

    def observe(name: str, index: int, inputs: Inputs, output: Any) -> None:
        recheck.observe(name, index, inputs, output)
        escape.observe(name, index, inputs, output)
    return observe


def _asking(ask: Callable[..., Any]) -> Callable[..., Any]:
    """A judge request whose failure (the judge died, its oracle raised) ends the case as a benchmark defect."""

    def call(*args: Any) -> Any:
        try:
            return ask(*args)
        except JudgeError as error:
            raise CaseFailure(Status.BASELINE_ERROR, str(error)) from None

    return call


def _weaker_baseline_notes(plan: TaskPlan, rejected: list[str], device: str, chosen: str) -> list[str]:
    """Why the baseline that served is not production's own kernel, if it is not: a speedup over it is then no win
    over production (2026-11-30 on the H200: FLA rejected on three tasks, fp32 fallbacks 20-60x slower served)."""
    notes = []
    if rejected:
        notes.append(f"production implementation(s) {', '.join(rejected)} failed the correctness check, so {chosen}"
                     " is the baseline")
    # listed for this device yet unavailable: a library not installed (a GPU run without the production extras)
    missing = [f"{impl.name} ({plan.unavailable[impl.name]})" for impl in plan.manifest.implementations.production
               if impl.name in plan.unavailable and device in impl.devices]
    if missing:
        notes.append(f"production implementation(s) {', '.join(missing)} cannot run here, so {chosen} is the baseline")
    if plan.components_raised:  # the composite itself is built from the next implementation of those tasks
        raised = ", ".join(f"{name} ({why})" for name, why in plan.components_raised.items())
        notes.append(f"lower-level production implementation(s) {raised} could not be composed, so each of those"
                     " tasks' next implementation stands in")
    return notes


def _verify_integrity(ctx: CaseContext, when: str) -> None:
    if ctx.integrity is None:
        return
    changed = ctx.integrity.changed()
    if changed:
        raise CaseFailure(Status.REWARD_HACK, f"harness or library code was patched or reconfigured {when}: {changed}")


def _fallback_reason(module: torch.nn.Module, inputs: Inputs) -> str:
    """An adapter whose library kernel does not serve every case falls back to another path inside its forward (so
    higher-level tasks composed on it still run) and says when, through `fallback_reason(inputs)`; "" otherwise."""
    reason = getattr(module, "fallback_reason", None)
    if not callable(reason):
        return ""
    try:
        return str(reason(inputs))
    except Exception as error:  # noqa: BLE001 - a broken adapter is rejected, the next implementation serves
        raise CaseFailure(Status.BASELINE_ERROR, f"its fallback_reason raised: {one_line(error)}") from None


def _instantiate(impl: Impl, ctx: CaseContext, state, status: Status, who: str) -> torch.nn.Module:
    case = ctx.plan.manifest.case(ctx.case_name)
    if ctx.spacers is not None:
        ctx.spacers.before_build()
    try:
        return build(impl.cls, case, impl.components, state, ctx.device, who)
    except Exception as error:  # noqa: BLE001 - constructor failures belong to the implementation
        raise CaseFailure(status, f"{who} could not be built: {one_line(error)}") from None


def _timing_sets(ctx: CaseContext, rounds) -> list[Inputs]:
    """Enough input sets that rotating through them defeats the cache (capped by max_rotating_sets)."""
    manifest, case = ctx.plan.manifest, ctx.plan.manifest.case(ctx.case_name)
    set_bytes = sum(t.numel() * t.element_size() for t in rounds[0].values()) or 1
    cache_bytes = (ctx.profile.l2_cache_mb or 32) * 2**20
    count = max(2, min(ctx.harness.max_rotating_sets, math.ceil(3 * cache_bytes / set_bytes)))
    seed = ctx.harness.seed
    return [
        make_inputs(manifest, case, ctx.device,
                    generator(ctx.device, stream_seed(seed, manifest.name, case.name, "timing", k)))
        for k in range(count)
    ]


def _oracle_note(info: dict[str, Any]) -> str:
    """How the judge answers this case's fresh checks, for the worker log."""
    eager = f"eager {info['eager_oracle_ms']:.1f} ms a call"
    if info["oracle_path"] == "graph":
        return f"float64 oracle replayed from a CUDA graph, {info['graph_oracle_ms']:.1f} ms a call against {eager}"
    return f"float64 oracle {eager}: {info['oracle_reason']}"

"""MacroEval as a spec: every expected number below is computed by hand in the comment next to it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fastkernels.macroeval import (
    ModelResult, end_to_end_score, fast_p, format_table, geomean, kernel_level,
)
from fastkernels.endtoend import blended_speedup, calibrated_correctness
from fastkernels.records import ErrorMetrics, ResultRow, Status

ERR = ErrorMetrics(max_abs=1e-4, max_rel=1e-3, worst_ratio=0.1, atol=1e-3, rtol=1e-3)


def passed(task: str, speedup: float, case: str = "c0", level: int = 1, cats: tuple[str, ...] = ("norm",)) -> ResultRow:
    return ResultRow(task=task, level=level, categories=list(cats), case=case, status=Status.PASSED,
                     baseline_ms=1.0, candidate_ms=1.0 / speedup, speedup=speedup, candidate_error=ERR)


def failed(task: str, status: Status = Status.INCORRECT, case: str = "c0", level: int = 1,
           cats: tuple[str, ...] = ("norm",)) -> ResultRow:
    return ResultRow(task=task, level=level, categories=list(cats), case=case, status=status, reason="why")


def not_attempted(task: str, case: str = "c0", level: int = 1, cats: tuple[str, ...] = ("norm",)) -> ResultRow:
    return ResultRow(task=task, level=level, categories=list(cats), case=case, status=Status.NOT_ATTEMPTED,
                     reason="no candidate file", baseline_ms=1.0)


def level(report, n: int = 1):
    return next(lv for lv in report.levels if lv.level == n)


# ---------------------------------------------------------------- kernel level: tasks


def test_task_speedup_is_geomean_of_its_cases():
    # cases 4.0 and 1.0 -> sqrt(4) = 2.0
    rep = kernel_level([passed("a", 4.0, "c0"), passed("a", 1.0, "c1")])
    assert rep.tasks[0].speedup == pytest.approx(2.0)
    assert level(rep).geomean_speedup == pytest.approx(2.0)


def test_a_tasks_candidate_compile_time_adds_up_over_the_cases_that_measured_it():
    # 2.5 + 0.5 s; the production baselines' own compile time is not the candidate's
    rows = [passed("a", 1.0, "c0").model_copy(update={"compile_s": {"liger": 9.0, "candidate": 2.5}}),
            passed("a", 1.0, "c1").model_copy(update={"compile_s": {"liger": 0.1, "candidate": 0.5}}),
            passed("a", 1.0, "c2")]
    assert kernel_level(rows).tasks[0].candidate_compile_s == pytest.approx(3.0)
    assert kernel_level([passed("b", 1.0)]).tasks[0].candidate_compile_s is None


def test_one_failing_case_makes_the_task_incorrect():
    rep = kernel_level([passed("a", 3.0, "c0"), failed("a", case="c1"), passed("b", 1.5)])
    lv = level(rep)
    assert (lv.tasks, lv.attempted, lv.correct) == (2, 2, 1)
    a = next(t for t in rep.tasks if t.task == "a")
    assert not a.correct and a.speedup is None  # a failed task earns no speedup, even from its passing case
    assert lv.geomean_speedup == pytest.approx(1.5)  # only b


def test_geomean_over_correct_tasks_only():
    # correct: 2.0 and 0.5 -> geomean 1.0; the failed task's neighbours don't change it
    rep = kernel_level([passed("a", 2.0), passed("b", 0.5), failed("c", Status.RUNTIME_ERROR)])
    assert level(rep).geomean_speedup == pytest.approx(1.0)


def test_fast_p_denominators_are_all_tasks():
    # 4 tasks: a 2.0 (correct, >1, not >2), b 3.0 (correct, >1, >2), c 0.5 (correct, slow), d failed
    rep = kernel_level([passed("a", 2.0), passed("b", 3.0), passed("c", 0.5), failed("d")])
    lv = level(rep)
    assert lv.fast_1 == pytest.approx(2 / 4)  # a, b
    assert lv.fast_2 == pytest.approx(1 / 4)  # b only: fast_p is strictly faster than p, as in KernelBench
    assert lv.geomean_speedup == pytest.approx((2.0 * 3.0 * 0.5) ** (1 / 3))  # 3^(1/3) ~ 1.442


def test_fast_p_is_strict():
    rep = kernel_level([passed("a", 1.0)])
    assert level(rep).fast_1 == 0.0  # exactly 1.0x is no win
    assert fast_p([], 1.0) == 0.0


def test_fast_p_ci95_counts_only_wins_whose_interval_clears_p():
    # a: 1.004x with interval [0.99, 1.02] (a noop-sized wobble); b: cases 1.5 [1.4, 1.6] and 1.2 [1.1, 1.3];
    # c: 2.5 [2.2, 2.8] (clears 1 and 2); d: 1.3 with no interval recorded
    def within(task, speedup, low, high, case="c0"):
        return passed(task, speedup, case).model_copy(update={"speedup_ci95": (low, high)})

    rep = kernel_level([within("a", 1.004, 0.99, 1.02), within("b", 1.5, 1.4, 1.6, "c0"),
                        within("b", 1.2, 1.1, 1.3, "c1"), within("c", 2.5, 2.2, 2.8), passed("d", 1.3)])
    lv = level(rep)
    tasks = {t.task: t for t in rep.tasks}
    assert tasks["b"].speedup_low == pytest.approx(math.sqrt(1.4 * 1.1))  # geomean of the cases' lower bounds
    assert tasks["d"].speedup_low is None
    assert lv.fast_1 == pytest.approx(4 / 4)  # KernelBench's counts the wobble and the unbounded win
    assert lv.fast_1_ci95 == pytest.approx(2 / 4)  # b, c
    assert lv.fast_2_ci95 == pytest.approx(1 / 4)  # c
    assert "fast_1 (95%)" in format_table(rep)


def test_not_attempted_is_no_win():
    rep = kernel_level([passed("a", 4.0), not_attempted("b", "c0"), not_attempted("b", "c1")])
    lv = level(rep)
    b = next(t for t in rep.tasks if t.task == "b")
    assert (b.attempted, b.correct, b.speedup) == (False, False, 1.0)  # stands in at 1.0x
    assert (lv.tasks, lv.attempted, lv.correct) == (2, 1, 1)
    assert lv.fast_1 == pytest.approx(0.5)  # b is in the denominator, not the numerator
    assert lv.geomean_speedup == pytest.approx(4.0)  # and not in the geomean
    assert lv.statuses["NOT_ATTEMPTED"] == 2 and lv.statuses["PASSED"] == 1


def test_partly_not_attempted_task_is_attempted_but_not_correct():
    rep = kernel_level([passed("a", 2.0, "c0"), not_attempted("a", "c1")])
    assert (level(rep).attempted, level(rep).correct) == (1, 0)


def test_baseline_error_excludes_the_task_everywhere():
    rows = [passed("a", 2.0), passed("b", 8.0, "c0"), failed("b", Status.BASELINE_ERROR, "c1")]
    rep = kernel_level(rows)
    lv = level(rep)
    assert (lv.tasks, lv.correct, lv.fast_1) == (1, 1, 1.0)  # only a is scored
    assert lv.geomean_speedup == pytest.approx(2.0)
    assert lv.statuses["BASELINE_ERROR"] == 0 and lv.statuses["PASSED"] == 1
    assert [e.task for e in rep.excluded] == ["b"]
    assert rep.excluded[0].reason == "c1: why" and rep.excluded[0].statuses["PASSED"] == 1
    assert "b" in format_table(rep)


def test_levels_are_reported_separately():
    rep = kernel_level([passed("a", 2.0, level=1), passed("x", 3.0, level=2), failed("y", level=2)])
    assert [lv.level for lv in rep.levels] == [1, 2]
    assert (level(rep, 2).tasks, level(rep, 2).correct, level(rep, 2).fast_2) == (2, 1, 0.5)


def test_category_macro_mean_does_not_let_a_big_category_dominate():
    # gemm: 3 correct tasks at 4.0 -> 4.0; norm: one at 1.0 -> 1.0; attn: none correct (reported, not averaged)
    rows = [passed(f"g{i}", 4.0, cats=("gemm",)) for i in range(3)]
    rows += [passed("n", 1.0, cats=("norm",)), failed("att", cats=("attn",))]
    rep = kernel_level(rows)
    cats = {c.category: c for c in rep.categories}
    assert cats["gemm"].geomean_speedup == pytest.approx(4.0) and cats["gemm"].correct_share == 1.0
    assert cats["attn"].geomean_speedup is None and cats["attn"].correct_share == 0.0
    assert rep.category_macro == pytest.approx((4.0 + 1.0) / 2)  # 2.5, not the task-weighted 4^(3/4) ~ 2.83
    assert rep.category_correct_macro == pytest.approx((1 + 1 + 0) / 3)


def test_a_task_counts_in_each_of_its_categories():
    rep = kernel_level([passed("fused", 2.0, cats=("norm", "quant"))])
    assert {c.category: c.tasks for c in rep.categories} == {"norm": 1, "quant": 1}


def test_inconsistent_input_is_refused():
    with pytest.raises(ValueError, match="duplicate"):
        kernel_level([passed("a", 2.0), passed("a", 3.0)])
    with pytest.raises(ValueError, match="modes"):
        kernel_level([passed("a", 2.0), passed("b", 2.0).model_copy(update={"mode": "composed"})])
    with pytest.raises(ValueError, match="level"):
        kernel_level([passed("a", 2.0, "c0", level=1), passed("a", 2.0, "c1", level=2)])


def test_failed_rows_cannot_carry_a_speedup():
    with pytest.raises(ValidationError):
        ResultRow(task="a", level=1, categories=[], case="c", status=Status.INCORRECT, reason="x", speedup=2.0)


def test_format_table_lists_levels_and_categories():
    text = format_table(kernel_level([passed("a", 2.0), passed("b", 0.5), failed("c")]))
    header = text.splitlines()[0].split()
    assert header[:4] == ["level", "tasks", "attempted", "correct"] and "fast_2" in header
    l1 = next(line for line in text.splitlines() if line.startswith("L1"))
    assert l1.split() == ["L1", "3", "3", "2", "1.000x", "33.3%", "0.0%", "0.0%", "0.0%"]  # no intervals: no 95% wins
    assert "category macro mean: 1.000x" in text
    assert format_table(kernel_level([])) == "no tasks scored"


# ---------------------------------------------------------------- kernel level: properties

speedups = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


@given(st.lists(speedups, min_size=1, max_size=12), st.floats(min_value=0.1, max_value=10.0))
def test_scaling_every_speedup_by_k_scales_the_geomean_by_k(values, k):
    base = kernel_level([passed(f"t{i}", v) for i, v in enumerate(values)])
    scaled = kernel_level([passed(f"t{i}", v * k) for i, v in enumerate(values)])
    assert level(scaled).geomean_speedup == pytest.approx(level(base).geomean_speedup * k, rel=1e-9)


@given(st.lists(st.one_of(speedups, st.none()), min_size=1, max_size=12))
def test_kernel_level_invariants(values):
    rows = [passed(f"t{i}", v) if v is not None else failed(f"t{i}") for i, v in enumerate(values)]
    lv = level(kernel_level(rows))
    assert 0.0 <= lv.fast_2 <= lv.fast_1 <= lv.correct / lv.tasks <= 1.0
    ok = [v for v in values if v is not None]
    if ok:
        assert min(ok) * (1 - 1e-9) <= lv.geomean_speedup <= max(ok) * (1 + 1e-9)
    else:
        assert lv.geomean_speedup is None


def test_geomean_rejects_non_positive():
    with pytest.raises(ValueError):
        geomean([1.0, 0.0])
    assert geomean([]) is None


# ---------------------------------------------------------------- end to end


def model(family: str, name: str, thr: float = 1.0, lat: float = 1.0, f: float = 0.0, floor: float = 0.01,
          valid: bool = True) -> ModelResult:
    if not valid:
        return ModelResult(family=family, model=name, noise_floor=floor, valid=False)
    return ModelResult(family=family, model=name, throughput_speedup=thr, latency_speedup=lat, discrepancy=f,
                       noise_floor=floor, valid=True)


def test_blended_speedup():
    assert blended_speedup(4.0, 1.0) == pytest.approx(2.0)  # 4^0.5 * 1^0.5
    assert blended_speedup(2.0, 0.5) == pytest.approx(1.0)  # a throughput win cannot hide a latency loss
    assert blended_speedup(4.0, 1.0, lam=1.0) == pytest.approx(4.0)
    rep = end_to_end_score([model("llama", "8b", thr=8.0, lat=2.0)], lam=0.25)
    assert rep.s_macro == pytest.approx(8.0**0.25 * 2.0**0.75)  # 2^(3/4 + 3/4) = 2^1.5


@pytest.mark.parametrize("f, floor, expected", [
    (0.0, 0.01, 1.0),      # below the floor
    (0.01, 0.01, 1.0),     # at the floor
    (0.5, 0.01, 0.0),      # at 0.5
    (0.9, 0.01, 0.0),      # beyond 0.5
    (0.25, 0.0, 0.5),      # midpoint of [0, 0.5]
    (0.3, 0.1, 0.5),       # midpoint of [0.1, 0.5]
    (0.2, 0.1, 0.75),      # (0.5 - 0.2) / (0.5 - 0.1)
])
def test_calibrated_correctness_boundaries(f, floor, expected):
    assert calibrated_correctness(f, floor) == pytest.approx(expected)
    assert end_to_end_score([model("m", "x", f=f, floor=floor)]).c_macro == pytest.approx(expected)


def test_invalid_models_earn_no_speedup_and_no_correctness():
    # family a: valid 4.0x (C=1) and one crash (C=0); family b: only a crash
    rep = end_to_end_score([model("a", "ok", thr=4.0, lat=4.0), model("a", "crash", valid=False),
                            model("b", "hang", valid=False)])
    fams = {f.family: f for f in rep.families}
    assert fams["a"].speedup == pytest.approx(4.0) and fams["a"].correctness == pytest.approx(0.5)
    assert fams["b"].speedup is None and fams["b"].valid == 0
    assert rep.s_macro == pytest.approx(4.0)  # b is out of S_macro ...
    assert rep.c_macro == pytest.approx((0.5 + 0.0) / 2)  # ... but counts 0 in C
    assert rep.coverage_macro == pytest.approx((0.5 + 0.0) / 2)  # ... and in Coverage
    assert rep.score == pytest.approx(4.0 * 0.25 * 0.25)


def test_nothing_valid_scores_zero():
    rep = end_to_end_score([model("a", "x", valid=False)])
    assert (rep.s_macro, rep.c_macro, rep.coverage_macro, rep.score) == (None, 0.0, 0.0, 0.0)


def test_coverage_counts_models_at_or_above_tau():
    # floor 0: C = (0.5 - f) / 0.5 -> f 0.0: 1.0, f 0.05: 0.9 (>= tau), f 0.1: 0.8 (below), f 0.5: 0.0
    ms = [model("a", "m0", f=0.0, floor=0.0), model("a", "m1", f=0.05, floor=0.0),
          model("a", "m2", f=0.1, floor=0.0), model("a", "m3", f=0.5, floor=0.0)]
    rep = end_to_end_score(ms)
    assert rep.coverage_macro == pytest.approx(2 / 4)
    assert rep.c_macro == pytest.approx((1.0 + 0.9 + 0.8 + 0.0) / 4)
    assert end_to_end_score(ms, tau=0.8).coverage_macro == pytest.approx(3 / 4)


def test_a_large_family_does_not_dominate():
    # llama: 8 models at 4x; qwen: 1 model at 1x, C = 0 (f = 0.5).
    ms = [model("llama", f"l{i}", thr=4.0, lat=4.0) for i in range(8)]
    ms.append(model("qwen", "q", thr=1.0, lat=1.0, f=0.5))
    rep = end_to_end_score(ms)
    assert rep.s_macro == pytest.approx(2.0)  # sqrt(4 * 1), not the per-model 4^(8/9) ~ 3.43
    assert rep.c_macro == pytest.approx(0.5)  # (1 + 0) / 2, not 8/9
    assert rep.coverage_macro == pytest.approx(0.5)
    assert rep.score == pytest.approx(2.0 * 0.5 * 0.5)


def test_model_result_validation():
    with pytest.raises(ValidationError):
        ModelResult(family="a", model="x", noise_floor=0.01, valid=True)  # a valid model needs its measurements
    with pytest.raises(ValidationError):
        model("a", "x", f=-0.1)
    with pytest.raises(ValidationError):
        model("a", "x", floor=0.5)  # a floor at 0.5 leaves no calibration range
    with pytest.raises(ValidationError):
        model("a", "x", thr=0.0)
    with pytest.raises(ValidationError):
        model("a", "x", thr=float("nan"))
    with pytest.raises(ValueError, match="duplicate"):
        end_to_end_score([model("a", "x"), model("a", "x")])
    with pytest.raises(ValueError):
        end_to_end_score([])


families = st.sampled_from(["llama", "qwen", "mixtral", "gemma"])
model_results = st.builds(
    lambda fam, thr, lat, f, floor, valid: model(fam, "", thr, lat, f, floor, valid),
    families, speedups, speedups, st.floats(0.0, 1.0), st.floats(0.0, 0.49), st.booleans())


@settings(max_examples=200)
@given(st.lists(model_results, min_size=1, max_size=20))
def test_score_lies_in_zero_to_s_macro(ms):
    ms = [m.model_copy(update={"model": f"m{i}"}) for i, m in enumerate(ms)]
    rep = end_to_end_score(ms)
    assert 0.0 <= rep.c_macro <= 1.0 and 0.0 <= rep.coverage_macro <= 1.0
    if rep.s_macro is None:
        assert rep.score == 0.0
    else:
        assert 0.0 <= rep.score <= rep.s_macro * (1 + 1e-12)


@given(st.lists(model_results, min_size=1, max_size=20), st.floats(min_value=0.1, max_value=10.0))
def test_scaling_both_speedups_by_k_scales_s_macro_by_k(ms, k):
    ms = [m.model_copy(update={"model": f"m{i}"}) for i, m in enumerate(ms)]
    scaled = [m if not m.valid else m.model_copy(update={"throughput_speedup": m.throughput_speedup * k,
                                                         "latency_speedup": m.latency_speedup * k}) for m in ms]
    a, b = end_to_end_score(ms), end_to_end_score(scaled)
    if a.s_macro is None:
        assert b.s_macro is None
    else:
        assert b.s_macro == pytest.approx(a.s_macro * k, rel=1e-9)
        assert (b.c_macro, b.coverage_macro) == (a.c_macro, a.coverage_macro)


def test_a_passed_row_failed_after_the_fact_keeps_nothing_its_timing_earned():
    # the warden's verdict turns every row of a task into a REWARD_HACK after its rows were written
    row = passed("a", 2.0).model_copy(update={"speedup_ci95": (1.9, 2.1), "graph_speedup": 1.8,
                                              "candidate_graph_ms": 0.5, "baseline_graph_ms": 0.9})
    hacked = row.failed(Status.REWARD_HACK, "the worker's warden was stopped")
    assert hacked.status is Status.REWARD_HACK and hacked.reason == "the worker's warden was stopped"
    assert hacked.speedup is None and hacked.speedup_ci95 is None and hacked.candidate_ms is None
    assert hacked.graph_speedup is None and hacked.candidate_graph_ms is None
    assert hacked.baseline_ms == 1.0 and hacked.baseline_graph_ms == 0.9  # what the baseline measured stays
    assert hacked.candidate_error == ERR
    report = level(kernel_level([hacked]))
    assert report.correct == 0 and report.geomean_speedup is None and report.fast_1 == 0.0

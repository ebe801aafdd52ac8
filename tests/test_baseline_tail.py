"""Fresh-input checks do not blame a candidate for the tolerance's own tail: where the baseline, run on the same
inputs, misses the fixed tolerance too, the candidate passes if its worst error is within the calibration factor of
the baseline's (and the row's review says so); a wrong output still fails."""

from __future__ import annotations

import torch

from fastkernels.checks import BaselineTail
from fastkernels.correctness import judge

ATOL = 0.01


def judge_fresh(inputs, output):
    """The judge's answer for fresh inputs: here the oracle of `double` is 2x in float64."""
    return judge(output, inputs["x"], inputs["x"].double() * 2, ATOL, 0.0)


def doubled_with_error(error: float):
    def module(x: torch.Tensor) -> torch.Tensor:
        out = x * 2
        out[0] += error
        return out
    return module


def inputs():
    return {"x": torch.linspace(-1, 1, 64, dtype=torch.float64)}


def test_a_right_output_passes_without_running_the_baseline():
    def never(**_):
        raise AssertionError("the baseline runs only when the candidate's output misses the tolerance")
    tail = BaselineTail(judge_fresh, never, "production_impl", factor=3.0)
    assert tail(inputs(), doubled_with_error(0.0)(**inputs())).passed
    assert tail.note() == ""


def test_a_miss_that_the_baseline_makes_too_passes_and_is_noted():
    tail = BaselineTail(judge_fresh, doubled_with_error(0.015), "fla", factor=3.0)
    verdict = tail(inputs(), doubled_with_error(0.02)(**inputs()))
    assert verdict.passed and verdict.metrics.worst_ratio > 1
    assert "tolerance tail: on 1 fresh input(s) the baseline fla itself missed" in tail.note()


def test_a_miss_far_beyond_the_baselines_own_fails():
    tail = BaselineTail(judge_fresh, doubled_with_error(0.015), "fla", factor=3.0)
    verdict = tail(inputs(), doubled_with_error(10.0)(**inputs()))
    assert not verdict.passed
    assert "the baseline fla missed the tolerance on these inputs too" in verdict.reason
    assert tail.note() == ""


def test_a_miss_the_baseline_does_not_make_fails_as_before():
    tail = BaselineTail(judge_fresh, doubled_with_error(0.0), "fla", factor=3.0)
    candidate = doubled_with_error(0.02)(**inputs())
    assert tail(inputs(), candidate).reason == judge_fresh(inputs(), candidate).reason != ""


def test_the_baseline_gets_its_own_copy_of_the_inputs():
    def clobbers(x: torch.Tensor) -> torch.Tensor:
        out = x * 2
        out[0] += 0.015
        x.zero_()
        return out
    given = inputs()
    tail = BaselineTail(judge_fresh, clobbers, "fla", factor=3.0)
    assert tail(given, doubled_with_error(0.02)(**inputs())).passed
    assert torch.equal(given["x"], inputs()["x"])


def test_an_output_the_judge_did_not_reach_must_still_agree_with_the_baselines():
    # the judge stops at the first failing output: a tail miss in output 0 must not wave through garbage in output 1
    def judge_pair(inputs, output):
        oracle = inputs["x"].double() * 2
        return judge(output, (inputs["x"], inputs["x"]), (oracle, oracle), ATOL, 0.0)

    def pair_with(error: float, second: float):
        return lambda x: (doubled_with_error(error)(x), x * 2 + second)

    tail = BaselineTail(judge_pair, pair_with(0.015, 0.0), "fla", factor=3.0)
    assert tail(inputs(), pair_with(0.02, 0.0)(**inputs())).passed
    verdict = tail(inputs(), pair_with(0.02, 5.0)(**inputs()))
    assert not verdict.passed and "differs from the baseline's output" in verdict.reason

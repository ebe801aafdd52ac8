"""The correctness checker catches any single wrong element, NaN, Inf, shape, dtype or type difference."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fastkernels.correctness import judge, unchanged

shapes = st.lists(st.integers(1, 7), min_size=1, max_size=3)


def reference(shape: list[int], seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@settings(max_examples=60, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16), data=st.data())
def test_any_single_element_off_by_more_than_the_tolerance_fails(shape, seed, data):
    oracle = reference(shape, seed)
    output = oracle.to(torch.float32)
    assert judge(output, output, oracle, 1e-5, 1e-5).passed
    index = data.draw(st.integers(0, output.numel() - 1))
    wrong = output.clone()
    wrong.view(-1)[index] += 1e-5 + 1e-5 * abs(float(oracle.view(-1)[index])) + 1e-3
    verdict = judge(wrong, output, oracle, 1e-5, 1e-5)
    assert not verdict.passed and "1 of" in verdict.reason and verdict.metrics.worst_ratio > 1


@settings(max_examples=40, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16), data=st.data(), bad=st.sampled_from([float("nan"), float("inf"), -float("inf")]))
def test_a_single_nan_or_inf_fails(shape, seed, data, bad):
    oracle = reference(shape, seed)
    output = oracle.to(torch.float32)
    output.view(-1)[data.draw(st.integers(0, output.numel() - 1))] = bad
    assert "NaN/Inf" in judge(output, output, oracle, 1.0, 1.0).reason


def test_shape_dtype_device_and_type_differences_fail():
    oracle = reference([4, 5], 0)
    expected = oracle.to(torch.bfloat16)
    assert "shape" in judge(expected.reshape(5, 4), expected, oracle, 1, 1).reason
    assert "dtype" in judge(expected.float(), expected, oracle, 1, 1).reason
    assert "plain torch.Tensor" in judge(torch.nn.Parameter(expected), expected, oracle, 1, 1).reason
    assert "plain torch.Tensor" in judge([1.0], [expected], [oracle], 1, 1).reason


def test_tuple_outputs_need_the_same_number_of_tensors():
    oracle = reference([3], 1)
    expected = (oracle.float(), oracle.float())
    assert "returned 1 tensors, expected 2" in judge(oracle.float(), expected, (oracle, oracle), 1e-5, 1e-5).reason
    assert judge(expected, expected, (oracle, oracle), 1e-5, 1e-5).passed


def test_within_tolerance_passes_and_reports_the_worst_ratio():
    oracle = torch.tensor([1.0, 2.0, -4.0], dtype=torch.float64)
    output = torch.tensor([1.001, 2.0, -4.0])
    verdict = judge(output, output, oracle, 1e-3, 1e-3)
    assert verdict.passed and 0.4 < verdict.metrics.worst_ratio < 0.6


def test_an_output_with_its_own_tolerance_is_judged_by_it_and_the_others_are_not():
    # (output, recurrent state): the state is ~10x the output's scale, so its own absolute tolerance is ~10x too.
    oracle = (torch.tensor([0.5, -0.5], dtype=torch.float64), torch.tensor([5.0, -5.0], dtype=torch.float64))
    state_off = (oracle[0].float(), torch.tensor([5.05, -5.0]))
    output_off = (torch.tensor([0.55, -0.5]), oracle[1].float())
    assert "output[1]" in judge(state_off, state_off, oracle, 1e-2, 0.0).reason
    assert judge(state_off, state_off, oracle, 1e-2, 0.0, per_output={1: (0.1, 0.0)}).passed
    assert "output[0]" in judge(output_off, output_off, oracle, 1e-2, 0.0, per_output={1: (0.1, 0.0)}).reason


def test_integer_outputs_must_match_exactly():
    expected = torch.tensor([1, 2, 3])
    assert judge(expected.clone(), expected, expected, 1, 1).passed
    assert "1 of 3 elements differ" in judge(torch.tensor([1, 2, 4]), expected, expected, 1, 1).reason


def test_inputs_must_stay_bitwise_unchanged_unless_allowed():
    saved = {"x": torch.tensor([0.0, 1.0]), "y": torch.tensor([2.0])}
    assert unchanged(saved, {"x": torch.tensor([-0.0, 1.0]), "y": saved["y"]}, []) != ""
    assert unchanged(saved, {"x": torch.tensor([0.0, 1.0]), "y": torch.tensor([3.0])}, ["y"]) == ""
    assert "'y'" in unchanged(saved, {"x": saved["x"], "y": torch.tensor([3.0])}, [])

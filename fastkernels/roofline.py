"""The physical floor of a case: the fewest bytes it must move and FLOPs it must do, against the profile's peaks.

A time below the floor is impossible on that hardware and is flagged `implausible` (work skipped, or timed on
the wrong stream). Fractions of peak say how close an implementation comes to the hardware limit.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from fastkernels.config import HardwareProfile
from fastkernels.correctness import flatten
from fastkernels.expressions import evaluate
from fastkernels.inputs import DTYPES
from fastkernels.manifest import Case, Manifest, case_names


def case_cost(
    manifest: Manifest, case: Case, inputs: Mapping[str, torch.Tensor], output: Any, state: Mapping[str, torch.Tensor]
) -> tuple[float, float]:
    """(bytes, flops) of one call; `bytes: auto` counts every input, output and parameter once."""
    cost = manifest.cost_of(case)
    names = case_names(case, dsize=torch.empty((), dtype=DTYPES[case.dtype]).element_size())
    if cost.bytes == "auto":
        tensors = [*inputs.values(), *flatten(output), *state.values()]
        moved = float(sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor)))
    else:
        moved = float(evaluate(cost.bytes, names))
    return moved, float(evaluate(cost.flops, names))


def floor_ms(profile: HardwareProfile, dtype: str, moved: float, flops: float) -> float | None:
    """max(bytes / peak bandwidth, FLOPs / peak rate) in ms, or None when the profile has no peaks (CPU)."""
    if profile.peak_memory_bandwidth_gbs is None:
        return None
    memory = moved / (profile.peak_memory_bandwidth_gbs * 1e9) * 1e3
    rate = profile.peak_tflops.get(dtype)
    compute = flops / (rate * 1e12) * 1e3 if rate and flops else 0.0
    return max(memory, compute)


def roofline_fields(
    manifest: Manifest,
    case: Case,
    profile: HardwareProfile,
    inputs: Mapping[str, torch.Tensor],
    output: Any,
    state: Mapping[str, torch.Tensor],
    baseline_ms: float,
    candidate_ms: float | None,
) -> dict[str, Any]:
    moved, flops = case_cost(manifest, case, inputs, output, state)
    floor = floor_ms(profile, case.dtype, moved, flops)
    fields: dict[str, Any] = {"bytes": moved, "flops": flops}
    if floor is not None:
        fields["baseline_fraction_of_peak"] = floor / baseline_ms
    if candidate_ms is not None:
        fields["candidate_gbps"] = moved / (candidate_ms * 1e-3) / 1e9
        fields["candidate_tflops"] = flops / (candidate_ms * 1e-3) / 1e12
        if floor is not None:
            fields["candidate_fraction_of_peak"] = floor / candidate_ms
            fields["implausible"] = candidate_ms < floor
    return fields

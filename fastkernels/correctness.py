"""Judging an output against the float64 oracle: every element, no exceptions.

An output passes only if its structure, types, shapes and dtypes equal the expected ones, every element is finite
where the oracle is, and 100% of elements satisfy |out - ref| <= atol + rtol * |ref|.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import torch

from fastkernels.records import ErrorMetrics


@dataclass(frozen=True)
class Verdict:
    """`reason` is empty when the output passes; `metrics` exists whenever values could be compared."""

    reason: str
    metrics: ErrorMetrics | None

    @property
    def passed(self) -> bool:
        return not self.reason


def flatten(output: Any) -> list[Any]:
    """Leaves of an output that may be a tensor or nested tuples/lists of tensors."""
    if isinstance(output, (tuple, list)):
        return [leaf for item in output for leaf in flatten(item)]
    return [output]


def judge(
    output: Any, expected: Any, oracle: Any, atol: float, rtol: float,
    per_output: Mapping[int, tuple[float, float]] | None = None,
) -> Verdict:
    """Compare `output` with `oracle` (float64), taking structure, shapes and dtypes from `expected`.

    `per_output` maps an output's index to its own (atol, rtol), for outputs whose scale differs from the rest (a
    recurrent state returned beside the output); every other output uses `atol` and `rtol`."""
    leaves, expected_leaves, oracle_leaves = flatten(output), flatten(expected), flatten(oracle)
    if len(leaves) != len(expected_leaves):
        return Verdict(f"returned {len(leaves)} tensors, expected {len(expected_leaves)}", None)
    worst: ErrorMetrics | None = None
    for index, (leaf, want, ref) in enumerate(zip(leaves, expected_leaves, oracle_leaves)):
        where = f"output[{index}]" if len(leaves) > 1 else "output"
        if type(leaf) is not torch.Tensor:
            return Verdict(f"{where} is a {type(leaf).__name__}, not a plain torch.Tensor", None)
        if leaf.is_meta or leaf.layout is not torch.strided:
            return Verdict(f"{where} is not a materialised strided tensor", None)
        if leaf.shape != want.shape:
            return Verdict(f"{where} has shape {list(leaf.shape)}, expected {list(want.shape)}", None)
        if leaf.dtype != want.dtype:
            return Verdict(f"{where} has dtype {leaf.dtype}, expected {want.dtype}", None)
        if leaf.device != want.device:
            return Verdict(f"{where} is on {leaf.device}, expected {want.device}", None)
        leaf_atol, leaf_rtol = (per_output or {}).get(index, (atol, rtol))
        reason, metrics = _compare_values(leaf, ref, leaf_atol, leaf_rtol, where)
        if reason:
            return Verdict(reason, metrics)
        if metrics is not None:
            worst = metrics if worst is None else ErrorMetrics(
                max_abs=max(worst.max_abs, metrics.max_abs), max_rel=max(worst.max_rel, metrics.max_rel),
                rms_abs=max(worst.rms_abs, metrics.rms_abs), worst_ratio=max(worst.worst_ratio, metrics.worst_ratio),
                atol=atol, rtol=rtol)
    return Verdict("", worst)


def _compare_values(leaf: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, where: str):
    if not leaf.dtype.is_floating_point:
        mismatched = int((leaf != ref.to(leaf.dtype)).sum())
        metrics = ErrorMetrics(max_abs=float(mismatched > 0), max_rel=0.0, worst_ratio=float(mismatched), atol=0, rtol=0)
        return (f"{where}: {mismatched} of {leaf.numel()} elements differ" if mismatched else ""), metrics
    out = leaf.detach().to(torch.float64)
    ref = ref.detach().to(device=out.device, dtype=torch.float64)
    finite_ref = torch.isfinite(ref)
    bad_nonfinite = (~torch.isfinite(out) & finite_ref) | (~finite_ref & (out != ref) & ~(out.isnan() & ref.isnan()))
    if bool(bad_nonfinite.any()):
        count = int(bad_nonfinite.sum())
        return f"{where}: {count} of {out.numel()} elements are NaN/Inf where the oracle is finite (or differ)", None
    diff = (out - ref).abs().masked_fill(~finite_ref, 0.0)
    bound = atol + rtol * ref.abs().masked_fill(~finite_ref, 0.0)
    ratio = diff / bound
    metrics = ErrorMetrics(
        max_abs=float(diff.max()) if diff.numel() else 0.0,
        max_rel=float((diff / ref.abs().clamp_min(1e-30)).max()) if diff.numel() else 0.0,
        rms_abs=float(diff.pow(2).mean().sqrt()) if diff.numel() else 0.0,
        worst_ratio=float(ratio.max()) if ratio.numel() else 0.0,
        atol=atol,
        rtol=rtol,
    )
    failing = int((ratio > 1.0).sum())
    if failing:
        index = int(ratio.flatten().argmax())
        return (
            f"{where}: {failing} of {out.numel()} elements outside atol={atol:g} + rtol={rtol:g}*|ref|"
            f" (worst at flat index {index}: {float(out.flatten()[index]):.6g} vs {float(ref.flatten()[index]):.6g})",
            metrics,
        )
    return "", metrics


def unchanged(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor], allowed: list[str]) -> str:
    """Empty if every input not in `allowed` is bitwise identical to its saved copy, else the first culprit."""
    for name, saved in before.items():
        if name in allowed:
            continue
        now = after[name]
        same = saved.shape == now.shape and saved.dtype == now.dtype and bool(torch.equal(_bits(saved), _bits(now)))
        if not same:
            return f"input {name!r} was modified (the task does not allow mutating it)"
    return ""


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    """The raw bytes of a tensor, so NaN payloads and -0.0 compare exactly."""
    return tensor.detach().contiguous().reshape(-1).view(torch.uint8)

"""End-to-end MacroEval over model families: Score = S_macro × C_macro × Coverage_macro.

Every number is taken per family first and then averaged over families, so a family with many models (e.g. eight
Llama sizes) weighs as much as a family with one: the score rewards breadth across architectures, not one winner
repeated. Invalid models (crash, hang, NaN, wrong outputs) earn no speedup and no correctness.
"""

from __future__ import annotations

import math
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field, model_validator


def _geomean(values: list[float]) -> float | None:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else None


class ModelResult(BaseModel):
    """One model's end-to-end measurement. A valid model needs both speedups (> 0) and its discrepancy `f`;
    `noise_floor` is the discrepancy of a fresh-process baseline rerun, below which differences are noise."""

    model_config = ConfigDict(extra="forbid")

    family: str
    model: str
    throughput_speedup: float | None = Field(default=None, gt=0)
    latency_speedup: float | None = Field(default=None, gt=0)
    discrepancy: float | None = Field(default=None, ge=0)
    noise_floor: float = Field(ge=0, lt=0.5)
    valid: bool

    @model_validator(mode="after")
    def _valid_is_measured(self) -> "ModelResult":
        if self.valid:
            fields = ("throughput_speedup", "latency_speedup", "discrepancy")
            missing = [f for f in fields if getattr(self, f) is None or not math.isfinite(getattr(self, f))]
            if missing:
                raise ValueError(f"a valid model needs finite {', '.join(missing)}")
        return self


class ModelScore(BaseModel):
    """Per-model outcome: blended speedup (None when invalid), calibrated correctness C_i, and whether C_i >= tau."""

    model_config = ConfigDict(extra="forbid")

    family: str
    model: str
    valid: bool
    speedup: float | None
    correctness: float
    covered: bool


class FamilyReport(BaseModel):
    """Per family. `speedup` is None when no model is valid: the family then drops out of S_macro (it earns no
    speedup, and standing in at 1.0x would let a broken family pull S_macro toward 1) but still counts 0 in C and
    Coverage, which is where its failure is charged."""

    model_config = ConfigDict(extra="forbid")

    family: str
    models: list[ModelScore]
    valid: int
    speedup: float | None
    correctness: float
    coverage: float


class EndToEndReport(BaseModel):
    """The totals. `s_macro` is None when no family has a valid model; `score` is then 0."""

    model_config = ConfigDict(extra="forbid")

    lam: float
    tau: float
    families: list[FamilyReport]
    s_macro: float | None
    c_macro: float
    coverage_macro: float
    score: float


def calibrated_correctness(f: float, noise_floor: float) -> float:
    """C_i: 1 at or below the model's own noise floor, 0 at f >= 0.5, linear between (continuous at both ends)."""
    if f <= noise_floor:
        return 1.0
    if f >= 0.5:
        return 0.0
    return (0.5 - f) / (0.5 - noise_floor)


def blended_speedup(throughput: float, latency: float, lam: float = 0.5) -> float:
    """s = thr^λ · lat^(1−λ): a geometric blend, so a 2x throughput win cannot hide a 2x latency loss (λ = 0.5)."""
    return throughput**lam * latency ** (1.0 - lam)


def _score_model(m: ModelResult, lam: float, tau: float) -> ModelScore:
    if not m.valid:
        return ModelScore(family=m.family, model=m.model, valid=False, speedup=None, correctness=0.0, covered=False)
    assert m.throughput_speedup is not None and m.latency_speedup is not None and m.discrepancy is not None
    c = calibrated_correctness(m.discrepancy, m.noise_floor)
    return ModelScore(family=m.family, model=m.model, valid=True, speedup=blended_speedup(m.throughput_speedup,
                      m.latency_speedup, lam), correctness=c, covered=c >= tau)


def end_to_end_score(models: list[ModelResult], lam: float = 0.5, tau: float = 0.9) -> EndToEndReport:
    """Score = S_macro × C_macro × Coverage_macro, each taken per family then averaged over families.

    S_macro: geomean of s over valid models per family, then geomean over families with a valid model.
    C_macro, Coverage_macro: arithmetic mean per family (invalid models count C_i = 0), then over all families.
    """
    if not models:
        raise ValueError("end_to_end_score needs at least one model")
    if not 0.0 <= lam <= 1.0 or not 0.0 < tau <= 1.0:
        raise ValueError(f"need 0 <= lam <= 1 and 0 < tau <= 1, got lam={lam}, tau={tau}")
    keys = [(m.family, m.model) for m in models]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate (family, model) entries")
    by_family: dict[str, list[ModelScore]] = defaultdict(list)
    for m in models:
        by_family[m.family].append(_score_model(m, lam, tau))
    families = []
    for fam in sorted(by_family):
        ms = by_family[fam]
        families.append(FamilyReport(
            family=fam, models=ms, valid=sum(m.valid for m in ms),
            speedup=_geomean([m.speedup for m in ms if m.speedup is not None]),
            correctness=sum(m.correctness for m in ms) / len(ms),
            coverage=sum(m.covered for m in ms) / len(ms)))
    s_macro = _geomean([f.speedup for f in families if f.speedup is not None])
    c_macro = sum(f.correctness for f in families) / len(families)
    coverage_macro = sum(f.coverage for f in families) / len(families)
    score = 0.0 if s_macro is None else s_macro * c_macro * coverage_macro
    return EndToEndReport(lam=lam, tau=tau, families=families, s_macro=s_macro, c_macro=c_macro,
                          coverage_macro=coverage_macro, score=score)

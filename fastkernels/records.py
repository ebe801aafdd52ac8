"""The result row: one per (task, case), the contract between workers, MacroEval and readers of results.jsonl.

The status decides which fields exist: a PASSED row has times, a speedup and error metrics; a failed row has a reason
and no speedup; NOT_ATTEMPTED stands in at 1.0x with the baseline's time. The validator enforces this so no reader
can find a speedup on a row that earned none.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator


class Status(str, Enum):
    PASSED = "PASSED"
    INCORRECT = "INCORRECT"
    REWARD_HACK = "REWARD_HACK"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    TIMEOUT = "TIMEOUT"
    NOT_ATTEMPTED = "NOT_ATTEMPTED"
    BASELINE_ERROR = "BASELINE_ERROR"


FAILED = {Status.INCORRECT, Status.REWARD_HACK, Status.RUNTIME_ERROR, Status.COMPILE_ERROR, Status.TIMEOUT}


class ErrorMetrics(BaseModel):
    """Error of an output against the float64 oracle. `worst_ratio` = max |out-ref| / (atol + rtol*|ref|); <= 1 passes.
    `rms_abs` (root mean square of |out-ref|) is the stable statistic the calibrated-precision check compares."""

    model_config = ConfigDict(extra="forbid")

    max_abs: float
    max_rel: float
    rms_abs: float = 0.0
    worst_ratio: float
    atol: float
    rtol: float


class CallTimes(BaseModel):
    """Every timed call of a row's eager timing, in call order (`harness.keep_call_times`): what the speedup was
    computed from, for anyone who wants their own statistics or to see why a row moved."""

    model_config = ConfigDict(extra="forbid")

    baseline_ms: list[float]
    candidate_ms: list[float]  # empty without a candidate
    first: list[Literal["baseline", "candidate"]]  # which one ran first in each iteration
    rechecked: list[int]  # iterations whose candidate output was rechecked against a fresh reference
    input_sets: int  # iteration i ran on rotated input set i mod input_sets

    @model_validator(mode="after")
    def _one_entry_per_iteration(self) -> "CallTimes":
        iterations = len(self.baseline_ms)
        if len(self.first) != iterations or len(self.candidate_ms) not in (0, iterations):
            raise ValueError(f"call times need one entry per iteration ({iterations}) in candidate_ms and first")
        if any(not 0 <= index < iterations for index in self.rechecked):
            raise ValueError("rechecked names an iteration that was not timed")
        return self


# What timing the candidate earns a row: a row that fails after the fact (ResultRow.failed) keeps none of it.
EARNED_BY_TIMING = ("candidate_ms", "candidate_spread", "speedup", "speedup_ci95", "candidate_gbps", "candidate_tflops",
                    "candidate_fraction_of_peak", "candidate_graph_ms", "graph_speedup", "graph_speedup_ci95")


class ResultRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    level: int
    categories: list[str]
    case: str
    status: Status
    reason: str = ""
    mode: Literal["independent", "composed"] = "independent"
    agent: str = ""
    baseline: str = ""
    baseline_impl: str = ""
    baseline_alternatives: dict[str, float | str] = {}
    # a composite's lower-level tasks and the implementation of each the serving baseline was built from (L2/L3;
    # empty for a task without components): what "production" composed on this machine
    baseline_components: dict[str, str] = {}
    device: str = ""
    hardware: str = ""
    timing: Literal["cuda_events", "host_clock", ""] = ""
    seed: int = 0
    baseline_ms: float | None = None
    candidate_ms: float | None = None
    baseline_spread: float | None = None
    candidate_spread: float | None = None
    samples: int | None = None
    speedup: float | None = None
    speedup_ci95: tuple[float, float] | None = None
    candidate_error: ErrorMetrics | None = None
    baseline_error: ErrorMetrics | None = None
    bytes: float | None = None
    flops: float | None = None
    candidate_gbps: float | None = None
    candidate_tflops: float | None = None
    candidate_fraction_of_peak: float | None = None
    baseline_fraction_of_peak: float | None = None
    baseline_graph_ms: float | None = None
    candidate_graph_ms: float | None = None
    graph_speedup: float | None = None
    graph_speedup_ci95: tuple[float, float] | None = None  # resampling captures and replays (graphs.py)
    graph_note: str = ""
    graph_captures: int | None = None  # captures a side the graph times rotate over (graphs.py)
    instances: int | None = None  # instances a side the timed calls and graph captures rotate over (instances.py)
    # the production implementation the graph replays compare against: baseline_impl, or where that cannot be
    # captured the fastest correct one that can (graphs.py)
    graph_baseline_impl: str | None = None
    # the same as sync_lag_ms, over the timed graph replays (graphs.py runs the stream-escape check on them too)
    graph_sync_lag_ms: tuple[float, float] | None = None
    implausible: bool = False
    review: str = ""
    throttled: bool | None = None
    sm_mhz: tuple[int | None, int | None] | None = None
    # GPU only: how long the device stayed busy after the timed stream finished, at the 60th percentile of the calls,
    # (baseline, candidate): what the stream-escape check compared (fastkernels.stream_escape).
    sync_lag_ms: tuple[float, float] | None = None
    call_times: CallTimes | None = None
    graph_call_times: CallTimes | None = None  # the same for the graph replays; `input_sets` counts the captures
    # per implementation (each production one that passed its rounds, and "candidate"): the wall seconds its first
    # call in the correctness rounds took beyond its quickest later call (Dynamo tracing, compiling or loading
    # compiled kernels, autotuning): the shape's compile time, which issue #3's harness overhead leaves out and
    # reports (fastkernels.checks.run_rounds)
    compile_s: dict[str, float] = {}
    # per implementation whose first calls made Inductor work (the same keys as compile_s): its counters then, e.g.
    # `coordesc_tuning_bench` (coordinate descent tuned afresh here) or only cache hits (its configuration came from
    # the caches, restored tuning picks included): how each compiled baseline got the configuration it was timed with
    # (fastkernels.compile_events; scripts/compare_tuning.py)
    compile_events: dict[str, dict[str, int]] = {}
    # GPU only: (baseline, candidate) MiB one call allocates at its peak beyond what was held before it (outputs,
    # workspaces, temporaries; torch's caching allocator only), candidate None without one (fastkernels.call_memory)
    call_mib: tuple[float, float | None] | None = None

    @model_validator(mode="after")
    def _fields_follow_status(self) -> "ResultRow":
        if self.status is Status.PASSED:
            missing = [f for f in ("baseline_ms", "candidate_ms", "speedup", "candidate_error") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a PASSED row needs {', '.join(missing)}")
        elif self.status is Status.NOT_ATTEMPTED:
            if self.speedup not in (None, 1.0) or self.candidate_ms is not None:
                raise ValueError("a NOT_ATTEMPTED row stands in at speedup 1.0 with no candidate time")
            object.__setattr__(self, "speedup", 1.0)
        else:
            if self.speedup is not None or self.candidate_ms is not None:
                raise ValueError(f"a {self.status.value} row earns no speedup and has no candidate time")
            if not self.reason:
                raise ValueError(f"a {self.status.value} row needs a reason")
        return self

    def failed(self, status: Status, reason: str) -> "ResultRow":
        """This row as a failure found after it was written (the warden's verdict on the whole task): what timing
        the candidate earned goes, the rest stays, and the result is validated like any row (`model_copy` alone
        skips the validator, which let a REWARD_HACK row keep its speedup)."""
        data = self.model_dump()
        data.update({field: None for field in EARNED_BY_TIMING}, status=status, reason=reason)
        return ResultRow.model_validate(data)

    @property
    def correct(self) -> bool:
        return self.status is Status.PASSED

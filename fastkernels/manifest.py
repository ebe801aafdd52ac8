"""The task manifest (tasks/L<level>/<name>/task.yaml): the single source of truth about a task.

Loading validates strictly: an unknown, missing or mistyped key is a one-line `ManifestError` naming the file and
the key. A manifest may start with `include: <path>` (relative to itself); the included mapping is the base and the
manifest's own keys override it, key by key at the top level, as lm-evaluation-harness does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fastkernels.expressions import ExpressionError, evaluate

# The paper's eight model families (arXiv 2605.23215); every task names the ones whose architectures use it.
FAMILIES = (
    "dense-moe-llm",         # Llama-3.1, DeepSeek-V3.2, GLM, Mixtral, BitNet, GPT-OSS, EAGLE-3, Gemma
    "linear-attention",      # Mamba, Mamba2, RWKV-7, GLA, RetNet, Qwen3-Next, Kimi-Linear, TTT, Jamba
    "vision-video-audio",    # FLUX.1, HunyuanVideo, SDXL, SAM, Whisper, CosyVoice
    "multimodal-encoders",   # Qwen2-VL, Qwen3-VL, Qwen2.5-Omni, SigLIP-2, DINOv3, SwinV2
    "edge-detection",        # MobileNetV4, ConvNeXtV2, EfficientNetV2, YOLOv10, RT-DETRv2
    "3d-robotics-science",   # 3D Gaussian splatting, Instant-NGP, PointTransformerV3, OpenFold3, Pi0, DP3
    "recommendation",        # DLRMv2, LightGCN, BGE-M3, ColBERTv2, LLaDA
    "world-models",          # Oasis, V-JEPA 2
)
Family = Literal[FAMILIES]  # type: ignore[valid-type]
DTYPES = ("float64", "float32", "bfloat16", "float16", "int64", "int32", "bool")
Device = Literal["cpu", "cuda"]
Tier = Literal["cpu", "gpu"]


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message is one line naming file and key."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


NAME = r"^[A-Za-z0-9_.\-]+$"


class Mirrors(Strict):
    """The production module this task's interface copies, so a winning kernel drops into it. Plain names only
    (`vllm`, `vllm.model_executor.layers.layernorm`, `RMSNorm`): notes about the call go in a YAML comment."""

    library: str = Field(pattern=NAME)
    module: str = Field(pattern=NAME)
    symbol: str = Field(pattern=NAME)


class Interface(Strict):
    """Class name and parameter names of constructor and forward, in order (without self)."""

    class_name: str = Field(alias="class")
    init: list[str]
    forward: list[str]


class Implementation(Strict):
    """One implementation of the task's interface.

    `source` is `file.py:Class` (a file in the task directory) or `package.module:Class` (an installed library).
    It is available when every module in `requires` imports and the run's device is in `devices`.
    """

    name: str
    source: str
    requires: list[str] = []
    devices: list[Device] = ["cpu", "cuda"]
    provenance: str = ""


class Implementations(Strict):
    """`eager` is plain PyTorch and doubles as the float64 oracle; `production` is ordered fastest-expected first."""

    eager: Implementation
    production: list[Implementation]


class InputSpec(Strict):
    """How to draw one forward argument. Shape entries and bounds are ints or expressions over dims and init args.

    `arange` counts 0, 1, ... along the last dimension (token positions of a prefill), repeated over the others.
    """

    shape: list[int | str]
    dtype: str = "case"
    dist: Literal["normal", "uniform", "randint", "arange"] = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float | str = 0
    high: float | str = 1


class ParameterInit(Strict):
    """Redraw a parameter after construction so trivial inits (all ones) cannot hide a kernel that ignores it."""

    dist: Literal["normal", "uniform"] = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 1.0


class Tolerance(Strict):
    atol: float = Field(gt=0)
    rtol: float = Field(ge=0)


class Cost(Strict):
    """Fewest bytes a case must move and FLOPs it must do: expressions over dims, init args and `dsize`.

    `bytes: auto` counts every input, output and parameter once (right for kernels that touch all of them);
    a task that reads only part of a tensor (an embedding gathers rows) gives an expression instead.
    """

    bytes: int | str = "auto"
    flops: int | str = 0


class Case(Strict):
    """One shape the task is scored on. `tier` says whether it is a small CPU case or a real GPU shape."""

    name: str
    tier: Tier
    init: dict[str, Any]
    dims: dict[str, int] = {}
    dtype: str = "bfloat16"
    inputs: list[str] | None = None
    cost: Cost | None = None
    source: str = ""

    @model_validator(mode="after")
    def _known_dtype(self) -> "Case":
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        return self


class Manifest(Strict):
    name: str
    level: int = Field(ge=1, le=4)
    categories: list[str] = Field(min_length=1)
    architectures: list[str] = Field(min_length=1)
    families: list[Family] = Field(min_length=1)
    mirrors: Mirrors
    interface: Interface
    implementations: Implementations
    components: list[str] = []
    inputs: dict[str, InputSpec]
    parameters: dict[str, ParameterInit] = {}
    mutates: list[str] = []
    allow: list[Literal["side_streams", "threads"]] = []
    tolerance: dict[str, Tolerance] = {}
    # Per output index, per dtype: an output whose scale differs from the others (a recurrent state beside the
    # output) gets its own tolerance instead of `tolerance`.
    output_tolerance: dict[int, dict[str, Tolerance]] = {}
    calibration_factor: float | None = Field(default=None, gt=1)
    cost: Cost = Cost()
    cases: list[Case] = Field(min_length=1)
    description: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> "Manifest":
        forward = set(self.interface.forward)
        for name in self.inputs:
            if name not in forward:
                raise ValueError(f"inputs.{name}: not a forward parameter ({', '.join(self.interface.forward)})")
        for name in self.mutates:
            if name not in self.inputs:
                raise ValueError(f"mutates: {name!r} is not an input")
        tolerances = {"tolerance": self.tolerance,
                      **{f"output_tolerance.{i}": t for i, t in self.output_tolerance.items()}}
        for key, by_dtype in tolerances.items():
            for dtype in by_dtype:
                if dtype not in DTYPES:
                    raise ValueError(f"{key}.{dtype}: not a dtype ({', '.join(DTYPES)})")
        for index in self.output_tolerance:
            if index < 0:
                raise ValueError(f"output_tolerance.{index}: an output index counts from 0")
        seen: set[str] = set()
        for index, case in enumerate(self.cases):
            if case.name in seen:
                raise ValueError(f"cases.{index}.name: duplicate case {case.name!r}")
            seen.add(case.name)
            _check_case(self, index, case)
        return self

    def case(self, name: str) -> Case:
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"task {self.name!r} has no case {name!r}")

    def output_tolerances(self, dtype: str) -> dict[int, tuple[float, float]]:
        """(atol, rtol) of each output that has its own tolerance for cases of `dtype`."""
        return {index: (by_dtype[dtype].atol, by_dtype[dtype].rtol)
                for index, by_dtype in self.output_tolerance.items() if dtype in by_dtype}

    def cost_of(self, case: Case) -> Cost:
        return case.cost if case.cost is not None else self.cost

    def case_inputs(self, case: Case) -> list[str]:
        """Forward arguments a case passes, in forward order; the rest take their defaults."""
        wanted = case.inputs if case.inputs is not None else list(self.inputs)
        return [name for name in self.interface.forward if name in wanted]


def _check_case(manifest: Manifest, index: int, case: Case) -> None:
    where = f"cases.{index}"
    for name in case.init:
        if name not in manifest.interface.init:
            raise ValueError(f"{where}.init.{name}: not a constructor parameter")
    if case.inputs is not None:
        for name in case.inputs:
            if name not in manifest.inputs:
                raise ValueError(f"{where}.inputs: {name!r} is not declared under inputs")
    names = case_names(case, dsize=2)
    try:
        for arg in manifest.case_inputs(case):
            spec = manifest.inputs[arg]
            for entry in spec.shape:
                evaluate(entry, names)
            if spec.dist == "randint":
                evaluate(spec.low, names)
                evaluate(spec.high, names)
        cost = manifest.cost_of(case)
        if cost.bytes != "auto":
            evaluate(cost.bytes, names)
        evaluate(cost.flops, names)
    except ExpressionError as error:
        raise ValueError(f"{where} ({case.name}): {error}") from None


def case_names(case: Case, dsize: int) -> dict[str, int | float]:
    """Names that shape, bound and cost expressions of a case may use."""
    numeric = {k: v for k, v in case.init.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {**numeric, **case.dims, "dsize": dsize}


def load_manifest(path: Path) -> Manifest:
    """Read, merge `include:` and validate one task.yaml; errors are one line naming file and key."""
    data = _read_with_includes(path, seen=())
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        message = first["msg"].removeprefix("Value error, ")
        raise ManifestError(f"{path}: {key}: {message}") from None
    expected = path.parent.name
    if manifest.name != expected:
        raise ManifestError(f"{path}: name: {manifest.name!r} must match its directory {expected!r}")
    if path.parent.parent.name != f"L{manifest.level}":
        raise ManifestError(f"{path}: level: {manifest.level} but the task sits under {path.parent.parent.name}/")
    return manifest


def _read_with_includes(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    if path in seen:
        raise ManifestError(f"{path}: include: cycle through {' -> '.join(map(str, seen))}")
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ManifestError(f"{path}: file not found") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise ManifestError(f"{path}:{line}: invalid YAML: {getattr(error, 'problem', error)}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: (top level): expected a mapping, got {type(data).__name__}")
    include = data.pop("include", None)
    if include is None:
        return data
    base = _read_with_includes((path.parent / str(include)).resolve(), seen + (path,))
    return {**base, **data}

"""Typed schemas for the composed Hydra config. conf/ holds every default; these only validate.

`RunConfig.from_omegaconf` turns the composed DictConfig into frozen records, rejecting unknown keys, wrong types and
unset mandatory values (`???`) with a one-line `ConfigError` naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = PROJECT_ROOT / "conf"
TASKS_DIR = PROJECT_ROOT / "tasks"


class ConfigError(ValueError):
    """A composed config that cannot run; the message is one line naming the key."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Clocks(Strict):
    graphics_mhz: int
    memory_mhz: int


class SlurmPlacement(Strict):
    """Where a job for this hardware goes on a Slurm cluster (hydra/launcher=fastkernels_slurm): one GPU per job.

    Partition and constraint names are site-specific: set them per cluster (`hardware.slurm.partition=gpu-h100`)."""

    partition: str | None = None
    constraint: str | None = None
    gres: str | None = None
    timeout_min: int = Field(default=240, gt=0)
    cpus_per_task: int = Field(default=8, gt=0)
    mem_gb: int = Field(default=64, gt=0)


class HardwareProfile(Strict):
    """Datasheet figures for one device kind; `auto` is resolved to a concrete profile by the session."""

    name: str
    kind: Literal["cpu", "cuda", "auto"] = "auto"
    gpu_name_pattern: str | None = None
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    memory_gb: float | None = None
    l2_cache_mb: float | None = None
    peak_memory_bandwidth_gbs: float | None = None
    peak_tflops: dict[str, float] = {}
    clocks: Clocks | None = None
    cuda_version: str | None = None
    container_image: str | None = None
    slurm: SlurmPlacement | None = None
    source: str = ""


class TaskSelection(Strict):
    name: str
    levels: list[int]
    include: list[str] = []
    exclude: list[str] = []
    categories: list[str] = []
    cases: list[str] = []  # case names to keep within the selected tasks (empty: every case of the run's tier)


class AgentConfig(Strict):
    name: str
    kind: str
    models: list[str] = []
    loop: str = ""
    budget: str = ""
    path: str | None = None


class BaselineConfig(Strict):
    name: Literal["production", "eager", "inductor"]
    compile_mode: str = "max-autotune-no-cudagraphs"


class Tolerance(Strict):
    atol: float = Field(gt=0)
    rtol: float = Field(ge=0)


class HarnessConfig(Strict):
    seed: int = 0
    correctness_rounds: int = Field(ge=3)
    repeat_runs: int = Field(default=3, ge=1)
    rechecks: int = Field(default=5, ge=0)
    calibration_factor: float = Field(default=3.0, gt=1)
    calibration_floor: float = Field(default=0.1, ge=0)
    warmup: int = Field(ge=1)
    iterations: int = Field(ge=3)
    target_ci: float = Field(default=0.01, gt=0)
    max_iterations: int | Literal["auto"] = "auto"
    max_timing_s: float = Field(default=20.0, gt=0)
    review_speedup: float = Field(default=10.0, gt=1)
    cuda_graphs: bool = True
    graph_captures: int = Field(default=8, ge=1)
    graph_captures_max: int = Field(default=32, ge=1)
    instances: int = Field(default=4, ge=1)
    placement_spacer_mb: float = Field(default=0.0, ge=0)
    time_eager: bool = False
    eager_timing_s: float = Field(default=5.0, gt=0)
    keep_call_times: bool = False
    timeout_s: float = Field(gt=0)
    worker_start: Literal["forkserver", "exec"] = "forkserver"
    cache_autotuning: bool = True
    compile_caches: Literal["per_case", "shared"] = "per_case"
    flush_l2: bool = True
    audit_guard: bool = True
    timing: Literal["auto", "cuda_events", "host_clock"] = "auto"
    launch_pad_us: float = Field(default=50.0, ge=0)
    launch_pad_max_us: float = Field(default=20000.0, ge=0)
    launch_pad_decay_after: int = Field(default=32, ge=0)
    max_rotating_sets: int = Field(ge=1)
    case_tier: Literal["auto", "cpu", "gpu"] = "auto"
    tolerance: dict[str, Tolerance]

    @field_validator("max_iterations")
    @classmethod
    def _at_least_three(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 3:
            raise ValueError("max_iterations must be 'auto' or at least 3")
        return value

    @model_validator(mode="after")
    def _starting_values_within_bounds(self) -> "HarnessConfig":
        if self.launch_pad_max_us < self.launch_pad_us:
            raise ValueError(f"launch_pad_max_us ({self.launch_pad_max_us:g}) must be at least launch_pad_us"
                             f" ({self.launch_pad_us:g}), the pad every case starts from")
        if self.graph_captures_max < self.graph_captures:
            raise ValueError(f"graph_captures_max ({self.graph_captures_max}) must be at least graph_captures"
                             f" ({self.graph_captures}), the captures every case starts from")
        return self

    def iteration_cap(self, device: str) -> int:
        """`max_iterations`, with "auto" read per device: on a GPU 3200 (an iteration costs ~1-2 ms there, and the
        noop rows of kernels under ~10 us settled within 2% only at 3200 on the H200, 2026-11-30), on the CPU 200
        (host-clock noise keeps most CPU cases at the cap, so the cap is the CPU default job's time: 400 until
        2026-12-03, when CI came within 16 s of its 20 minutes)."""
        if self.max_iterations != "auto":
            return int(self.max_iterations)
        return 3200 if device == "cuda" else 200


class ClockPolicy(Strict):
    policy: Literal["observe", "verify", "lock"]


class RunnerConfig(Strict):
    """Where the run executes: `local` (this process) or `container` (the profile's pinned image, fastkernels.container)."""

    name: Literal["local", "container"] = "local"
    engine: Literal["docker", "podman", "apptainer"] = "docker"
    image: str | None = None
    mount_source: bool = True
    network: str | None = "none"
    extra_args: list[str] = []
    dry_run: bool = False


class ScaleConfig(Strict):
    """How tasks spread over devices (fastkernels.scale): `serial`, `threads` (one lane per GPU of this host) or
    `ray` (one Ray task per task, one GPU each). `devices`: how many (`all`: every visible GPU; 1 lane on the CPU)."""

    backend: Literal["serial", "threads", "ray"] = "serial"
    devices: int | Literal["all"] = Field(default="all")
    ray_address: str | None = None
    # Ray: CPU cores each task reserves (Ray sets the worker's OMP_NUM_THREADS to it; null: this host's cores / lanes)
    cpus_per_task: int | None = Field(default=None, ge=1)


class RunConfig(Strict):
    hardware: HardwareProfile
    tasks: TaskSelection
    agent: AgentConfig
    baseline: BaselineConfig
    harness: HarnessConfig
    clocks: ClockPolicy
    mode: Literal["independent", "composed"]
    runner: RunnerConfig = RunnerConfig()
    scale: ScaleConfig = ScaleConfig()

    @classmethod
    def from_omegaconf(cls, cfg: DictConfig) -> "RunConfig":
        try:
            plain: Any = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        except MissingMandatoryValue as error:
            key = getattr(error, "full_key", "") or "?"
            hint = " (pass agent.path=/dir/with/L1/...)" if key == "agent.path" else ""
            raise ConfigError(f"config key {key} is not set{hint}") from None
        plain.pop("hydra", None)
        try:
            return cls.model_validate(plain)
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"config key {key}: {first['msg']}") from None

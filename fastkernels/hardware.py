"""What device this run is on, and whether the requested hardware profile describes it.

Peak figures (roofline fractions, physical floors, L2 flush size) come from the profile, so a run scored on an H200
with the H100 profile would report wrong fractions without failing. `resolve_profile` refuses that pairing with a
one-line error and warns where a matching profile still disagrees with the device (SM count, compute capability, L2).
"""

from __future__ import annotations

import logging
import platform
import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from fastkernels.clocks import driver_version
from fastkernels.config import ConfigError, HardwareProfile

log = logging.getLogger(__name__)


class HardwareMismatch(ConfigError):
    """The requested hardware profile does not describe the device; the message is one line with the fix."""


class DeviceInfo(BaseModel):
    """The device as torch and the driver report it. Memory in GiB and L2 in MiB, the units the datasheets use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["cpu", "cuda"]
    name: str
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    memory_gb: float | None = None
    l2_cache_mb: float | None = None
    driver_version: str | None = None
    cuda_runtime: str | None = None
    device_index: int = 0
    uuid: str | None = None  # the GPU's own identity: lent machines of one model are told apart by it


def _cpu_name() -> str:
    """The CPU model: /proc/cpuinfo's `model name` (Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def detect_device(index: int = 0) -> DeviceInfo:
    """CUDA device `index` (as torch numbers it, after CUDA_VISIBLE_DEVICES), or the CPU when CUDA is unavailable."""
    import torch

    if not torch.cuda.is_available():
        return DeviceInfo(kind="cpu", name=_cpu_name(), cuda_runtime=torch.version.cuda, device_index=index)
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise HardwareMismatch(f"CUDA device {index} does not exist ({count} visible; check CUDA_VISIBLE_DEVICES)")
    props = torch.cuda.get_device_properties(index)
    l2_bytes = getattr(props, "L2_cache_size", None)
    return DeviceInfo(
        kind="cuda",
        name=props.name,
        compute_capability=(props.major, props.minor),
        sm_count=props.multi_processor_count,
        memory_gb=round(props.total_memory / 2**30, 2),
        l2_cache_mb=round(l2_bytes / 2**20, 2) if l2_bytes else None,
        driver_version=driver_version(),
        cuda_runtime=torch.version.cuda,
        device_index=index,
        uuid=_gpu_uuid(props),
    )


def _gpu_uuid(props: object) -> str | None:
    """The GPU's UUID as nvidia-smi prints it (GPU-xxxxxxxx-...), or None where torch does not report one."""
    value = getattr(props, "uuid", None)
    return None if value is None else f"GPU-{value}"


def device_count() -> int:
    """CUDA devices visible to this process (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def load_profiles(conf_dir: Path) -> dict[str, HardwareProfile]:
    """Every concrete profile in `conf_dir`/hardware, by name. auto.yaml is a selector, not a profile, so it is skipped.

    Each file's `name` must equal its file stem, because `hardware=<stem>` is how a user picks it.
    """
    profiles: dict[str, HardwareProfile] = {}
    for path in sorted((Path(conf_dir) / "hardware").glob("*.yaml")):
        if path.stem == "auto":
            continue
        try:
            profile = HardwareProfile.model_validate(yaml.safe_load(path.read_text()) or {})
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{path}: key {key}: {first['msg']}") from None
        if profile.name != path.stem:
            raise ConfigError(f"{path}: name {profile.name!r} must equal the file name {path.stem!r}")
        if profile.kind not in ("cpu", "cuda"):
            raise ConfigError(f"{path}: kind must be cpu or cuda, not {profile.kind!r}")
        profiles[profile.name] = profile
    return profiles


def _matches(profile: HardwareProfile, device: DeviceInfo) -> bool:
    pattern = profile.gpu_name_pattern
    return device.kind == "cuda" and pattern is not None and re.search(pattern, device.name, re.IGNORECASE) is not None


def profile_warnings(profile: HardwareProfile, device: DeviceInfo) -> list[str]:
    """Where a GPU profile and the device disagree although the name matched (e.g. an H100 PCIe with 114 SMs)."""
    if profile.kind != "cuda" or device.kind != "cuda":
        return []
    # (what, profile value, device value, slack); L2 gets 1 MB because drivers and datasheets round it differently.
    checks = [
        ("compute capability", profile.compute_capability, device.compute_capability, None),
        ("SM count", profile.sm_count, device.sm_count, None),
        ("L2 MB", profile.l2_cache_mb, device.l2_cache_mb, 1.0),
    ]
    where = f"hardware={profile.name} vs device {device.device_index} {device.name!r}"
    return [
        f"{where}: {what} {want} in the profile but {have} on the device"
        for what, want, have, slack in checks
        if want is not None and have is not None and (want != have if slack is None else abs(want - have) > slack)
    ]


def resolve_profile(
    requested: HardwareProfile, device: DeviceInfo, profiles: dict[str, HardwareProfile]
) -> HardwareProfile:
    """The concrete profile this run is scored against.

    `auto` picks the profile whose gpu_name_pattern matches the device name (cpu without CUDA). A concrete profile
    is returned as requested (keeping command-line overrides) once it is known to describe the device; the cpu
    profile is always allowed and means "run the CPU path". Disagreements that do not block the run are logged;
    `profile_warnings` returns them for env.json.
    """
    names = ", ".join(sorted(profiles)) or "none"
    where = f"device {device.device_index} is {device.name!r}"
    if requested.name == "auto":
        if device.kind == "cpu":
            if "cpu" not in profiles:
                raise HardwareMismatch(f"hardware=auto found no CUDA device and no cpu profile (profiles: {names})")
            return profiles["cpu"]
        found = [name for name, profile in sorted(profiles.items()) if _matches(profile, device)]
        if not found:
            raise HardwareMismatch(
                f"hardware=auto: no profile matches {where} (profiles: {names}); "
                f"add conf/hardware/<name>.yaml with a gpu_name_pattern matching it"
            )
        if len(found) > 1:
            raise HardwareMismatch(f"hardware=auto: {where}, which matches several profiles ({', '.join(found)}); "
                                   f"choose one with hardware=<name> or narrow their gpu_name_pattern")
        resolved = profiles[found[0]]
    elif requested.kind == "cpu":
        return requested
    else:
        pattern = requested.gpu_name_pattern
        if pattern is None:
            raise HardwareMismatch(f"hardware={requested.name} has no gpu_name_pattern; set one in its yaml")
        if device.kind != "cuda":
            raise HardwareMismatch(f"hardware={requested.name} expects a GPU matching {pattern!r} but no CUDA device "
                                   f"is visible ({where}); choose hardware=auto or hardware=cpu")
        if not _matches(requested, device):
            fitting = [name for name, profile in sorted(profiles.items()) if _matches(profile, device)]
            choice = " or ".join(["hardware=auto", *(f"hardware={name}" for name in fitting)])
            raise HardwareMismatch(f"hardware={requested.name} expects a GPU matching {pattern!r} but {where}; "
                                   f"choose {choice}")
        resolved = requested
    for warning in profile_warnings(resolved, device):
        log.warning(warning)
    return resolved

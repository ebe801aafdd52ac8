"""Read-only NVML telemetry: clocks, temperature, power and throttle reasons around each task.

A timing is only comparable when the clocks it ran under are known, so `read_clocks` is called before and after each
task. It never changes clocks (locking is a separate policy) and never raises: a machine without a driver gives
None, and a field the GPU does not report gives None for that field alone.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

# NVML's clocks-event (formerly "throttle") reason bits; fixed by the NVML ABI, so they are not read from pynvml.
THROTTLE_REASONS: dict[int, str] = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# Reasons that do not slow a busy kernel: an idle GPU, or clocks an operator set on purpose.
BENIGN_REASONS = frozenset({"gpu_idle", "applications_clocks_setting"})

# NVML enum values (nvmlClockType_t, nvmlTemperatureSensors_t).
_CLOCK_GRAPHICS, _CLOCK_SM, _CLOCK_MEM = 0, 1, 2
_TEMPERATURE_GPU = 0


class ClockSnapshot(BaseModel):
    """One NVML reading of a device. A None field is one the device or driver did not report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timestamp: datetime
    device_index: int
    sm_mhz: int | None = None
    memory_mhz: int | None = None
    graphics_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    throttle_reasons: list[str] | None = None
    throttled: bool | None = None


def decode_throttle_reasons(mask: int) -> list[str]:
    """Names of the bits set in an NVML reasons mask; bits newer than this table appear as `unknown_0x...`."""
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_REASONS)
    bit = 1
    while unknown >= bit:
        if unknown & bit:
            names.append(f"unknown_{bit:#x}")
        bit <<= 1
    return names


_state: dict[str, Any] = {"module": None, "ok": False}


def nvml() -> Any | None:
    """pynvml, imported lazily and initialised once per process; None when the package or the driver is missing.

    The cache is keyed by the module object so a replaced module (a test's fake) is initialised afresh.
    """
    try:
        import pynvml
    except Exception:
        return None
    if _state["module"] is not pynvml:
        try:
            pynvml.nvmlInit()
            ok = True
        except Exception:
            ok = False
        _state.update(module=pynvml, ok=ok)
    return pynvml if _state["ok"] else None


def nvml_handle(lib: Any, index: int) -> Any:
    """The NVML handle for CUDA device `index`.

    NVML numbers all GPUs and ignores CUDA_VISIBLE_DEVICES, so a worker pinned to one GPU would otherwise read GPU 0.
    Integer and full-UUID entries are mapped; anything else (MIG ids, prefixes) falls back to the index.
    """
    visible = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    if index < len(visible):
        entry = visible[index]
        if entry.isdigit():
            return lib.nvmlDeviceGetHandleByIndex(int(entry))
        if entry.startswith("GPU-"):
            try:
                return lib.nvmlDeviceGetHandleByUUID(entry)
            except Exception:
                pass
    return lib.nvmlDeviceGetHandleByIndex(index)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def driver_version() -> str | None:
    """The NVIDIA driver version string, or None without NVML."""
    lib = nvml()
    if lib is None:
        return None
    try:
        return _text(lib.nvmlSystemGetDriverVersion())
    except Exception:
        return None


def _read(fn: Callable[[], Any]) -> Any:
    """One field; any NVML error (NotSupported, NoPermission, a function missing from an old pynvml) gives None."""
    try:
        return fn()
    except Exception:
        return None


def _first(lib: Any, names: tuple[str, ...], *args: Any) -> int | None:
    """The first of `names` that answers: the current NVML API, then the deprecated one an older driver still has."""
    for name in names:
        fn = getattr(lib, name, None)
        value = _read(lambda: int(fn(*args))) if fn is not None else None
        if value is not None:
            return value
    return None


def read_clocks(index: int = 0) -> ClockSnapshot | None:
    """A snapshot of CUDA device `index`, or None when NVML is unavailable or the device cannot be opened."""
    lib = nvml()
    if lib is None:
        return None
    try:
        handle = nvml_handle(lib, index)
    except Exception:
        return None
    power_mw = _read(lambda: lib.nvmlDeviceGetPowerUsage(handle))
    limit_mw = _read(lambda: lib.nvmlDeviceGetEnforcedPowerLimit(handle))
    mask = _first(lib, ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"), handle)
    reasons = decode_throttle_reasons(mask) if mask is not None else None
    return ClockSnapshot(
        timestamp=datetime.now(timezone.utc),
        device_index=index,
        sm_mhz=_read(lambda: int(lib.nvmlDeviceGetClockInfo(handle, _CLOCK_SM))),
        memory_mhz=_read(lambda: int(lib.nvmlDeviceGetClockInfo(handle, _CLOCK_MEM))),
        graphics_mhz=_read(lambda: int(lib.nvmlDeviceGetClockInfo(handle, _CLOCK_GRAPHICS))),
        temperature_c=_first(lib, ("nvmlDeviceGetTemperatureV", "nvmlDeviceGetTemperature"), handle, _TEMPERATURE_GPU),
        power_w=power_mw / 1000.0 if power_mw is not None else None,
        power_limit_w=limit_mw / 1000.0 if limit_mw is not None else None,
        throttle_reasons=reasons,
        throttled=any(name not in BENIGN_REASONS for name in reasons) if reasons is not None else None,
    )

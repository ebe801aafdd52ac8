"""NVML clock snapshots, read through a fake pynvml so the tests run without a GPU or driver."""

from __future__ import annotations

import sys
import types

import pytest

from fastkernels import clocks
from fastkernels.clocks import decode_throttle_reasons, driver_version, read_clocks


class NVMLError(Exception):
    pass


class NotSupported(NVMLError):
    pass


def fake_nvml(*, init_error: bool = False, unsupported: tuple[str, ...] = (), reasons: int = 0,
              legacy: bool = False) -> types.ModuleType:
    """A pynvml stand-in: clocks SM 1980 / graphics 1980 / memory 3201 MHz, 45 C, 350 of 700 W.

    `unsupported` names functions that raise NotSupported; `legacy` drops the post-12.x function names.
    """
    lib = types.ModuleType("pynvml")
    lib.NVMLError = NVMLError
    lib.inits = 0
    lib.handles = []

    def call(name: str, value):
        def fn(*args):
            if name in unsupported:
                raise NotSupported(name)
            return value(*args) if callable(value) else value
        return fn

    def init():
        lib.inits += 1
        if init_error:
            raise NVMLError("Driver Not Loaded")

    def handle(index):
        lib.handles.append(index)
        return f"gpu{index}"

    lib.nvmlInit = init
    lib.nvmlDeviceGetHandleByIndex = handle
    lib.nvmlSystemGetDriverVersion = call("nvmlSystemGetDriverVersion", b"570.86.15")
    lib.nvmlDeviceGetClockInfo = call("nvmlDeviceGetClockInfo", lambda h, kind: {0: 1980, 1: 1980, 2: 3201}[kind])
    lib.nvmlDeviceGetTemperature = call("nvmlDeviceGetTemperature", 45)
    lib.nvmlDeviceGetPowerUsage = call("nvmlDeviceGetPowerUsage", 350_000)
    lib.nvmlDeviceGetEnforcedPowerLimit = call("nvmlDeviceGetEnforcedPowerLimit", 700_000)
    lib.nvmlDeviceGetCurrentClocksThrottleReasons = call("nvmlDeviceGetCurrentClocksThrottleReasons", reasons)
    if not legacy:
        lib.nvmlDeviceGetTemperatureV = call("nvmlDeviceGetTemperatureV", 45)
        lib.nvmlDeviceGetCurrentClocksEventReasons = call("nvmlDeviceGetCurrentClocksEventReasons", reasons)
    return lib


@pytest.fixture
def install(monkeypatch):
    """Put a fake pynvml where `import pynvml` finds it, with no GPU pinning from the environment."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def put(lib: types.ModuleType | None) -> types.ModuleType | None:
        monkeypatch.setitem(sys.modules, "pynvml", lib)
        return lib

    return put


def test_a_snapshot_reports_clocks_temperature_and_power(install):
    install(fake_nvml())
    snap = read_clocks(0)
    assert (snap.sm_mhz, snap.graphics_mhz, snap.memory_mhz, snap.temperature_c) == (1980, 1980, 3201, 45)
    assert (snap.power_w, snap.power_limit_w) == (350.0, 700.0)
    assert snap.throttle_reasons == [] and snap.throttled is False and snap.timestamp.tzinfo is not None


def test_an_idle_gpu_or_application_clocks_are_not_throttling(install):
    install(fake_nvml(reasons=0x001 | 0x002))
    snap = read_clocks()
    assert snap.throttle_reasons == ["gpu_idle", "applications_clocks_setting"] and snap.throttled is False


def test_power_and_thermal_caps_are_throttling(install):
    install(fake_nvml(reasons=0x004 | 0x040))
    snap = read_clocks()
    assert snap.throttle_reasons == ["sw_power_cap", "hw_thermal_slowdown"] and snap.throttled is True


def test_every_named_reason_bit_decodes_and_unknown_bits_are_kept():
    assert decode_throttle_reasons(0x1FF) == [
        "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
        "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting",
    ]
    assert decode_throttle_reasons(0x200) == ["unknown_0x200"]


def test_an_older_pynvml_is_read_through_the_deprecated_names(install):
    install(fake_nvml(legacy=True, reasons=0x008))
    snap = read_clocks()
    assert snap.temperature_c == 45 and snap.throttle_reasons == ["hw_slowdown"] and snap.throttled is True


def test_a_field_the_gpu_does_not_support_is_none_and_the_rest_is_read(install):
    install(fake_nvml(unsupported=("nvmlDeviceGetPowerUsage",)))
    snap = read_clocks()
    assert snap.power_w is None and snap.power_limit_w == 700.0 and snap.sm_mhz == 1980


def test_unreadable_throttle_reasons_are_unknown_not_false(install):
    both = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
    install(fake_nvml(unsupported=both))
    snap = read_clocks()
    assert snap.throttle_reasons is None and snap.throttled is None


def test_no_driver_gives_none_and_never_raises(install):
    lib = install(fake_nvml(init_error=True))
    assert read_clocks() is None and driver_version() is None
    assert lib.inits == 1, "a failed nvmlInit is not retried on every read"


def test_no_pynvml_package_gives_none(install):
    install(None)  # sys.modules[name] = None makes `import pynvml` raise ImportError
    assert read_clocks() is None and driver_version() is None


def test_nvml_is_initialised_once_per_process(install):
    lib = install(fake_nvml())
    read_clocks()
    read_clocks()
    assert lib.inits == 1 and driver_version() == "570.86.15"


def test_cuda_visible_devices_maps_the_cuda_index_to_the_nvml_index(install, monkeypatch):
    lib = install(fake_nvml())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert read_clocks(1).device_index == 1 and lib.handles == [5]


def test_the_module_never_changes_clocks():
    source = open(clocks.__file__).read()
    assert "nvmlDeviceSet" not in source and "nvmlDeviceReset" not in source

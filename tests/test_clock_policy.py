"""clocks=lock|verify|observe, against a fake pynvml and a fake nvidia-smi, so it runs without a GPU or root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import types

import pytest
from omegaconf import OmegaConf

from fastkernels.clock_policy import ClockPolicyError, TaskClocks, apply_clock_policy, throttled, verify_clocks
from fastkernels.clocks import ClockSnapshot
from fastkernels.config import CONF_DIR, PROJECT_ROOT, ClockPolicy, ConfigError, HardwareProfile

H200 = HardwareProfile.model_validate(OmegaConf.to_container(OmegaConf.load(CONF_DIR / "hardware" / "h200.yaml")))
CPU = HardwareProfile(name="cpu", kind="cpu")
LOCK_CALLS = ["nvmlDeviceSetGpuLockedClocks", "nvmlDeviceSetMemoryLockedClocks"]
RESTORE_CALLS = ["nvmlDeviceResetMemoryLockedClocks", "nvmlDeviceResetGpuLockedClocks"]
NO_PERMISSION, NOT_SUPPORTED, INVALID_ARGUMENT = 4, 3, 2


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


def fake_nvml(*, deny: dict[str, int] | None = None, app: tuple[int, int] = (1980, 3201)) -> types.ModuleType:
    """A pynvml stand-in that logs every call in `lib.calls`; `deny` maps a function name to the error it returns.

    `lib.now` holds what the device reports now (SM clock, throttle-reason mask), so a test can change it mid-task.
    """
    lib = types.ModuleType("pynvml")
    lib.NVMLError, lib.NVML_ERROR_NO_PERMISSION, lib.NVML_ERROR_NOT_SUPPORTED = NVMLError, NO_PERMISSION, NOT_SUPPORTED
    lib.calls, lib.now = [], {"sm": 1980, "reasons": 0}
    answers = {
        "nvmlInit": lambda: None,
        "nvmlDeviceGetHandleByIndex": lambda index: f"gpu{index}",
        "nvmlDeviceGetClockInfo": lambda h, kind: lib.now["sm"] if kind in (0, 1) else 3201,
        "nvmlDeviceGetApplicationsClock": lambda h, kind: {0: app[0], 2: app[1]}[kind],
        "nvmlDeviceGetCurrentClocksEventReasons": lambda h: lib.now["reasons"],
        **{name: lambda *args: None for name in LOCK_CALLS + RESTORE_CALLS},
    }
    for name, answer in answers.items():
        def call(*args, name=name, answer=answer):
            lib.calls.append(name)
            if name in (deny or {}):
                raise NVMLError(deny[name])
            return answer(*args)
        setattr(lib, name, call)
    return lib


def changes(lib: types.ModuleType) -> list[str]:
    return [name for name in lib.calls if "Set" in name or "Reset" in name]


@pytest.fixture
def install(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def put(lib: types.ModuleType | None) -> types.ModuleType | None:
        monkeypatch.setitem(sys.modules, "pynvml", lib)
        return lib

    return put


@pytest.fixture
def no_smi(tmp_path, monkeypatch):
    """A PATH on which there is no nvidia-smi."""
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """A fake nvidia-smi first on PATH that appends its argv to a log; it fails on the flag in $FAKE_SMI_FAIL."""
    bin_dir, log = tmp_path / "bin", tmp_path / "smi.log"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(f'#!/bin/sh\necho "$*" >> {log}\n'
                      'case " $* " in *" $FAKE_SMI_FAIL "*) echo "Insufficient Permissions" >&2; exit 4;; esac\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SMI_FAIL", "--none--")
    return lambda: log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def handlers():
    """Put SIGINT/SIGTERM back however a test leaves them."""
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


# lock


def test_lock_sets_both_profile_clocks_through_nvml_and_restores_them_on_exit(install, no_smi):
    lib = install(fake_nvml())
    with apply_clock_policy("lock", H200, 0) as guard:
        assert changes(lib) == LOCK_CALLS
        assert guard.locked.graphics_mhz == 1980 and guard.locked.memory_mhz == 3201 and guard.method == "nvml"
    assert changes(lib) == LOCK_CALLS + RESTORE_CALLS
    assert guard.summary() == {"policy": "lock", "locked": {"graphics_mhz": 1980, "memory_mhz": 3201},
                               "method": "nvml", "restored_by": "exit"}


def test_lock_restores_when_the_block_raises(install, no_smi):
    lib = install(fake_nvml())
    with pytest.raises(RuntimeError, match="kernel crashed"):
        with apply_clock_policy("lock", H200, 0):
            raise RuntimeError("kernel crashed")
    assert changes(lib) == LOCK_CALLS + RESTORE_CALLS


def test_sigterm_inside_the_block_restores_before_the_previous_handler_runs(install, no_smi, handlers):
    lib = install(fake_nvml())
    seen_by_previous: list[list[str]] = []

    def previous(signum, frame):
        seen_by_previous.append(changes(lib))
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, previous)
    with pytest.raises(SystemExit):
        with apply_clock_policy("lock", H200, 0) as guard:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs here at the latest
            pytest.fail("SIGTERM did not stop the block")
    assert seen_by_previous == [LOCK_CALLS + RESTORE_CALLS]
    assert guard.restored_by == "SIGTERM" and changes(lib) == LOCK_CALLS + RESTORE_CALLS, "restored exactly once"
    assert signal.getsignal(signal.SIGTERM) is previous, "the previous handler is back after the block"


def test_sigterm_with_the_default_handler_restores_then_exits_143(install, no_smi, handlers):
    lib = install(fake_nvml())
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with pytest.raises(SystemExit) as exit_info:
        with apply_clock_policy("lock", H200, 0):
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # else the kill below ends pytest
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert exit_info.value.code == 128 + signal.SIGTERM and changes(lib) == LOCK_CALLS + RESTORE_CALLS
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigint_restores_then_raises_keyboard_interrupt(install, no_smi, handlers):
    lib = install(fake_nvml())
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt):
        with apply_clock_policy("lock", H200, 0) as guard:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    assert guard.restored_by == "SIGINT" and changes(lib) == LOCK_CALLS + RESTORE_CALLS


def test_an_ignored_signal_stays_ignored_and_the_lock_holds(install, no_smi, handlers):
    lib = install(fake_nvml())
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with apply_clock_policy("lock", H200, 0):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
        assert changes(lib) == LOCK_CALLS
    assert changes(lib) == LOCK_CALLS + RESTORE_CALLS


def test_restoring_twice_is_harmless(install, no_smi):
    lib = install(fake_nvml())
    with apply_clock_policy("lock", H200, 0) as guard:
        guard.restore()
        guard.restore()
    assert changes(lib) == LOCK_CALLS + RESTORE_CALLS


def test_interpreter_exit_restores_a_lock_whose_block_never_closed(tmp_path):
    """The atexit hook: a lock entered and never exited is undone when Python shuts down."""
    log = tmp_path / "nvml.log"
    (tmp_path / "pynvml.py").write_text(textwrap.dedent(f"""
        def _log(name, *args): open({str(log)!r}, "a").write(name + "\\n")
        def nvmlInit(): pass
        def nvmlDeviceGetHandleByIndex(index): return index
        nvmlDeviceSetGpuLockedClocks = lambda *a: _log("SetGpu")
        nvmlDeviceSetMemoryLockedClocks = lambda *a: _log("SetMemory")
        nvmlDeviceResetGpuLockedClocks = lambda *a: _log("ResetGpu")
        nvmlDeviceResetMemoryLockedClocks = lambda *a: _log("ResetMemory")
    """))
    program = textwrap.dedent("""
        import atexit, sys
        from fastkernels.config import Clocks, HardwareProfile
        from fastkernels.clock_policy import apply_clock_policy
        atexit.register(lambda: print("restored_by", guard.restored_by))  # registered first, so it runs last
        profile = HardwareProfile(name="h200", kind="cuda", clocks=Clocks(graphics_mhz=1980, memory_mhz=3201))
        block = apply_clock_policy("lock", profile, 0)  # held, so only interpreter exit can close it
        guard = block.__enter__()
    """)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{PROJECT_ROOT}", "PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert log.read_text().split() == ["SetGpu", "SetMemory", "ResetMemory", "ResetGpu"]
    assert done.stdout.strip() == "restored_by atexit"


def test_no_permission_and_no_nvidia_smi_is_a_one_line_error(install, no_smi):
    lib = install(fake_nvml(deny={"nvmlDeviceSetGpuLockedClocks": NO_PERMISSION}))
    with pytest.raises(ClockPolicyError) as error:
        with apply_clock_policy("lock", H200, 0):
            pytest.fail("the block must not run unlocked")
    assert str(error.value) == ("clocks=lock: not permitted on this machine (NVML: insufficient permissions); "
                                "run as root or use clocks=observe")
    assert isinstance(error.value, ConfigError) and changes(lib) == ["nvmlDeviceSetGpuLockedClocks"]


def test_no_permission_falls_back_to_nvidia_smi(install, smi):
    install(fake_nvml(deny={"nvmlDeviceSetGpuLockedClocks": NO_PERMISSION}))
    with apply_clock_policy("lock", H200, 0) as guard:
        assert smi() == ["-i 0 -lgc 1980,1980", "-i 0 -lmc 3201,3201"] and guard.method == "nvidia-smi"
    assert smi()[2:] == ["-i 0 -rmc", "-i 0 -rgc"]


def test_without_nvml_nvidia_smi_locks_the_gpu_cuda_visible_devices_names(install, smi, monkeypatch):
    install(None)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    with apply_clock_policy("lock", H200, 1):
        pass
    assert smi() == ["-i 5 -lgc 1980,1980", "-i 5 -lmc 3201,3201", "-i 5 -rmc", "-i 5 -rgc"]


def test_a_memory_lock_nvidia_smi_refuses_undoes_the_graphics_lock(install, smi, monkeypatch):
    install(fake_nvml(deny={"nvmlDeviceSetMemoryLockedClocks": NOT_SUPPORTED}))
    monkeypatch.setenv("FAKE_SMI_FAIL", "-lmc")
    with pytest.raises(ClockPolicyError, match=r"nvidia-smi -i 0 -lmc 3201,3201 failed: Insufficient Permissions"):
        with apply_clock_policy("lock", H200, 0):
            pass
    assert smi() == ["-i 0 -lgc 1980,1980", "-i 0 -lmc 3201,3201", "-i 0 -rgc"]


def test_any_other_nvml_error_undoes_the_partial_lock_and_says_why(install, no_smi):
    lib = install(fake_nvml(deny={"nvmlDeviceSetMemoryLockedClocks": INVALID_ARGUMENT}))
    with pytest.raises(ClockPolicyError, match=r"^clocks=lock: NVML refused 1980/3201 MHz: NVML error 2$"):
        with apply_clock_policy("lock", H200, 0):
            pass
    assert changes(lib) == LOCK_CALLS + ["nvmlDeviceResetGpuLockedClocks"]


def test_lock_needs_clocks_in_the_hardware_profile(install, no_smi):
    install(fake_nvml())
    with pytest.raises(ClockPolicyError, match="profile bare sets no clocks"):
        with apply_clock_policy("lock", HardwareProfile(name="bare", kind="cuda"), 0):
            pass


# verify


def test_verify_passes_when_application_clocks_match_within_tolerance(install):
    lib = install(fake_nvml(app=(1980 - 15, 3201 + 10)))
    with apply_clock_policy("verify", H200, 0):
        pass
    assert changes(lib) == []


def test_verify_refuses_naming_the_clock_and_the_difference(install):
    install(fake_nvml(app=(1755, 3201)))
    with pytest.raises(ClockPolicyError) as error:
        with apply_clock_policy("verify", H200, 0):
            pytest.fail("the block must not run on the wrong clocks")
    message = str(error.value)
    assert "applications graphics clock is 1755 MHz, profile h200 wants 1980 MHz (-225 MHz" in message
    assert "memory" not in message and "\n" not in message


def test_verify_also_checks_a_reading_under_load_when_given(install):
    install(fake_nvml())
    loaded = ClockSnapshot(timestamp="2026-01-01T00:00:00Z", device_index=0, sm_mhz=1830, memory_mhz=3201)
    with pytest.raises(ClockPolicyError, match=r"current SM clock is 1830 MHz.*\(-150 MHz"):
        verify_clocks(H200, 0, current=loaded)


def test_verify_without_nvml_refuses(install):
    install(None)
    with pytest.raises(ClockPolicyError, match="NVML is unavailable"):
        with apply_clock_policy("verify", H200, 0):
            pass


# observe and the CPU


def test_observe_changes_nothing_and_reads_snapshots(install):
    lib = install(fake_nvml())
    with apply_clock_policy("observe", H200, 0) as guard:
        assert guard.snapshot().sm_mhz == 1980
    assert changes(lib) == [] and guard.summary()["locked"] is None


@pytest.mark.parametrize("policy", ["lock", "verify"])
def test_on_the_cpu_lock_and_verify_need_a_gpu(install, policy):
    install(fake_nvml())
    with pytest.raises(ClockPolicyError, match=rf"^clocks={policy} needs a GPU; this run is on the CPU"):
        with apply_clock_policy(policy, CPU, 0):
            pass


def test_on_the_cpu_observe_is_a_no_op(install):
    lib = install(fake_nvml())
    with apply_clock_policy("observe", CPU, 0) as guard:
        assert guard.before_task() is None and guard.after_task() == TaskClocks(throttled=None)
    assert lib.calls == []


def test_an_unknown_policy_is_refused():
    with pytest.raises(ClockPolicyError, match="unknown policy"):
        with apply_clock_policy("turbo", H200, 0):
            pass


# per-task snapshots


def test_a_steady_task_is_not_throttled(install):
    install(fake_nvml())
    with apply_clock_policy("observe", H200, 0) as guard:
        guard.before_task()
        record = guard.after_task()
    assert record.before.sm_mhz == record.after.sm_mhz == 1980 and record.throttled is False
    assert set(record.model_dump(mode="json")) == {"before", "after", "throttled"}


def test_a_throttle_reason_during_the_task_flags_it(install):
    lib = install(fake_nvml())
    with apply_clock_policy("observe", H200, 0) as guard:
        guard.before_task()
        lib.now["reasons"] = 0x040  # hw_thermal_slowdown
        assert guard.after_task().throttled is True


@pytest.mark.parametrize("after_mhz, flagged", [(1980 * 0.96, False), (1980 * 0.94, True)])
def test_an_sm_clock_drop_over_five_percent_flags_the_task(install, after_mhz, flagged):
    lib = install(fake_nvml())
    with apply_clock_policy("observe", H200, 0) as guard:
        guard.before_task()
        lib.now["sm"] = int(after_mhz)
        assert guard.after_task().throttled is flagged


def test_idle_down_clocking_is_not_throttling():
    at = "2026-01-01T00:00:00Z"
    busy = ClockSnapshot(timestamp=at, device_index=0, sm_mhz=1980, throttle_reasons=[], throttled=False)
    idle = ClockSnapshot(timestamp=at, device_index=0, sm_mhz=345, throttle_reasons=["gpu_idle"], throttled=False)
    assert throttled(busy, idle) is False and throttled(busy, None) is False


def test_the_clock_configs_name_their_policy():
    for name in ("lock", "verify", "observe"):
        assert ClockPolicy.model_validate(OmegaConf.to_container(OmegaConf.load(CONF_DIR / "clocks" / f"{name}.yaml"))
                                          ).policy == name
    assert "root" in (CONF_DIR / "clocks" / "lock.yaml").read_text()

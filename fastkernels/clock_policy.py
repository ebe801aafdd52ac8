"""The clock policy of a run: `lock` the profile's clocks, `verify` them, or only `observe` them (DESIGN.md, Clocks).

A lock is undone on every exit path (exit, exception, SIGINT/SIGTERM/SIGHUP, interpreter exit) because a GPU left
locked skews every later user; SIGKILL cannot be caught, so `scripts/clocks.sh restore` is the operator's remedy.
Per-task snapshots are taken under every policy, so a row can say whether it ran throttled."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import subprocess
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Literal

from pydantic import BaseModel, ConfigDict

from fastkernels.clocks import ClockSnapshot, nvml, nvml_handle, read_clocks
from fastkernels.config import Clocks, ConfigError, HardwareProfile

log = logging.getLogger("fastkernels")

GRAPHICS_TOLERANCE_MHZ, MEMORY_TOLERANCE_MHZ = 15, 10  # verify's bounds, in MHz
SM_DROP = 0.05  # an SM clock that falls by more than this fraction over a task counts as throttling
# NVML ABI values (nvmlClockType_t, nvmlReturn_t); pynvml's names are used when present.
_CLOCK_GRAPHICS, _CLOCK_MEM, _NOT_SUPPORTED, _NO_PERMISSION = 0, 2, 3, 4
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class ClockPolicyError(ConfigError):
    """A clock policy that cannot be honoured on this machine; the message is one line."""


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


class TaskClocks(BaseModel):
    """The clocks around one task, for a result row or env.json. `throttled` is None when nothing could be read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    before: ClockSnapshot | None = None
    after: ClockSnapshot | None = None
    throttled: bool | None = None


def throttled(before: ClockSnapshot | None, after: ClockSnapshot | None) -> bool:
    """True when either snapshot reports a slowing reason, or the SM clock fell by more than SM_DROP over the task.
    The drop is not judged when either reading was taken on an idle GPU: idle down-clocking is not throttling."""
    if any(snap is not None and snap.throttled for snap in (before, after)):
        return True
    if before is None or after is None or not before.sm_mhz or after.sm_mhz is None or "gpu_idle" in (
            (before.throttle_reasons or []) + (after.throttle_reasons or [])):
        return False
    return after.sm_mhz < before.sm_mhz * (1 - SM_DROP)


class ClockGuard:
    """What a policy did to one device, and the per-task readings. `restore` undoes a lock and is idempotent."""

    def __init__(self, policy: str, device_index: int, kind: Literal["cuda", "cpu"]) -> None:
        self.policy = policy
        self.device_index = device_index
        self.kind = kind
        self.locked: Clocks | None = None
        self.method: Literal["nvml", "nvidia-smi"] | None = None
        self.restored_by: str | None = None  # "exit", "atexit" or a signal name, once a lock was undone
        self._undo: list[Callable[[], None]] = []
        self._owner = os.getpid()  # a forked child inherits handlers but must not unlock its parent's GPU
        self._before: ClockSnapshot | None = None

    def snapshot(self) -> ClockSnapshot | None:
        """NVML clocks of the device now; None on the CPU or without NVML."""
        return read_clocks(self.device_index) if self.kind == "cuda" else None

    def before_task(self) -> ClockSnapshot | None:
        self._before = self.snapshot()
        return self._before

    def after_task(self) -> TaskClocks:
        before, after = self._before, self.snapshot()
        self._before = None
        unknown = before is None and after is None
        return TaskClocks(before=before, after=after, throttled=None if unknown else throttled(before, after))

    def summary(self) -> dict[str, Any]:
        """The env.json record of the policy."""
        return {"policy": self.policy, "locked": self.locked.model_dump() if self.locked else None,
                "method": self.method, "restored_by": self.restored_by}

    def restore(self, reason: str = "exit") -> None:
        """Undo every lock this guard made, newest first; a second call (or one from a forked child) does nothing."""
        if os.getpid() != self._owner or not self._undo:
            return
        self.restored_by = self.restored_by or reason
        self._undo_all()

    def _undo_all(self) -> None:
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except Exception as error:  # keep undoing the rest; the operator can still run scripts/clocks.sh
                log.warning("clocks: restore failed (%s); run scripts/clocks.sh restore", _one_line(error))


def _nvidia_smi(args: list[str]) -> None:
    """Run nvidia-smi; a non-zero exit becomes a one-line ClockPolicyError quoting its last line."""
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=60)
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        lines = lines or [f"exit {done.returncode}"]
        detail = _one_line(lines[-1]) if done.returncode != 0 else None
    except (OSError, subprocess.SubprocessError) as error:
        detail = _one_line(error)
    if detail is not None:
        raise ClockPolicyError(f"clocks=lock: nvidia-smi {' '.join(args)} failed: {detail}; use clocks=observe")


def _step(guard: ClockGuard, lock: Callable[[], Any], undo: Callable[[], Any]) -> None:
    """Register `undo` before locking, so a signal landing between the two cannot leave a lock nobody undoes."""
    guard._undo.append(undo)
    try:
        lock()
    except Exception:  # this lock did not happen; resetting it would only fail the same way
        guard._undo.remove(undo)
        raise


def _smi_id(index: int) -> str:
    """nvidia-smi's -i for CUDA device `index`: it ignores CUDA_VISIBLE_DEVICES, so map through it (as nvml_handle)."""
    visible = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    return visible[index] if index < len(visible) else str(index)


def _lock(guard: ClockGuard, profile: HardwareProfile) -> None:
    """Lock graphics then memory clocks at the profile's values, through NVML or else nvidia-smi."""
    if profile.clocks is None:
        raise ClockPolicyError(f"clocks=lock: hardware profile {profile.name} sets no clocks to lock to")
    graphics, memory = profile.clocks.graphics_mhz, profile.clocks.memory_mhz
    lib, why = nvml(), "unavailable"
    if lib is not None:
        no_permission = getattr(lib, "NVML_ERROR_NO_PERMISSION", _NO_PERMISSION)
        denied = {no_permission, getattr(lib, "NVML_ERROR_NOT_SUPPORTED", _NOT_SUPPORTED)}
        try:
            handle = nvml_handle(lib, guard.device_index)
            _step(guard, lambda: lib.nvmlDeviceSetGpuLockedClocks(handle, graphics, graphics),
                  lambda: lib.nvmlDeviceResetGpuLockedClocks(handle))
            _step(guard, lambda: lib.nvmlDeviceSetMemoryLockedClocks(handle, memory, memory),
                  lambda: lib.nvmlDeviceResetMemoryLockedClocks(handle))
            guard.locked, guard.method = profile.clocks, "nvml"
            return
        except Exception as error:
            guard._undo_all()  # a graphics lock without its memory lock is not left behind
            code = getattr(error, "value", None)
            if not isinstance(error, AttributeError) and code not in denied:
                detail = _one_line(error)
                raise ClockPolicyError(f"clocks=lock: NVML refused {graphics}/{memory} MHz: {detail}") from None
            why = "insufficient permissions" if code == no_permission else "locking not supported"
    if shutil.which("nvidia-smi") is None:
        raise ClockPolicyError(f"clocks=lock: not permitted on this machine (NVML: {why}); "
                               "run as root or use clocks=observe")
    gpu = _smi_id(guard.device_index)
    _step(guard, lambda: _nvidia_smi(["-i", gpu, "-lgc", f"{graphics},{graphics}"]),
          lambda: _nvidia_smi(["-i", gpu, "-rgc"]))
    _step(guard, lambda: _nvidia_smi(["-i", gpu, "-lmc", f"{memory},{memory}"]),
          lambda: _nvidia_smi(["-i", gpu, "-rmc"]))
    guard.locked, guard.method = profile.clocks, "nvidia-smi"


def verify_clocks(profile: HardwareProfile, device_index: int, current: ClockSnapshot | None = None) -> None:
    """Refuse unless NVML's applications clocks (the clock target NVML can read back) match the profile, and so does
    `current`, a reading under load, when the caller has one: it also catches a GPU that cannot hold that target."""
    if profile.clocks is None:
        raise ClockPolicyError(f"clocks=verify: hardware profile {profile.name} sets no clocks to verify against")
    if (lib := nvml()) is None:
        raise ClockPolicyError("clocks=verify: NVML is unavailable, so clocks cannot be checked; use clocks=observe")
    try:
        handle = nvml_handle(lib, device_index)
        app_graphics = int(lib.nvmlDeviceGetApplicationsClock(handle, _CLOCK_GRAPHICS))
        app_memory = int(lib.nvmlDeviceGetApplicationsClock(handle, _CLOCK_MEM))
    except Exception as error:
        raise ClockPolicyError(f"clocks=verify: NVML cannot read applications clocks ({_one_line(error)}); "
                               "use clocks=observe") from None
    wanted = profile.clocks
    checks = [("applications graphics", app_graphics, wanted.graphics_mhz, GRAPHICS_TOLERANCE_MHZ),
              ("applications memory", app_memory, wanted.memory_mhz, MEMORY_TOLERANCE_MHZ)]
    if current is not None:
        checks += [("current SM", current.sm_mhz, wanted.graphics_mhz, GRAPHICS_TOLERANCE_MHZ),
                   ("current memory", current.memory_mhz, wanted.memory_mhz, MEMORY_TOLERANCE_MHZ)]
    wrong = [f"{name} clock is {got} MHz, profile {profile.name} wants {want} MHz ({got - want:+d} MHz, "
             f"tolerance ±{tol})" for name, got, want, tol in checks if got is not None and abs(got - want) > tol]
    if wrong:
        raise ClockPolicyError(f"clocks=verify: {'; '.join(wrong)}; lock them (clocks=lock, scripts/clocks.sh) "
                               "or use clocks=observe")


@contextmanager
def _restored_on_exit(guard: ClockGuard) -> Iterator[None]:
    """Restore the guard on exit, exception, SIGINT/SIGTERM/SIGHUP (then chain) and at interpreter exit."""
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: Any) -> None:
        old = previous.get(signum, signal.SIG_DFL)
        if old == signal.SIG_IGN:  # the process was not going to stop, so the lock stays
            return
        guard.restore(signal.Signals(signum).name)
        if callable(old):
            old(signum, frame)
        else:  # SIG_DFL or unknown: exit through SystemExit so `finally` blocks still write what was measured
            raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():  # signal.signal only works there
        for signum in _SIGNALS:
            previous[signum] = signal.signal(signum, handler)
    at_exit = lambda: guard.restore("atexit")  # noqa: E731 - unregister needs this exact object
    atexit.register(at_exit)
    try:
        yield
    finally:
        guard.restore()
        atexit.unregister(at_exit)
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)


@contextmanager
def apply_clock_policy(policy: str, profile: HardwareProfile, device_index: int) -> Iterator[ClockGuard]:
    """Apply `policy` to CUDA device `device_index` for the body of the `with`, and undo it afterwards."""
    kind: Literal["cuda", "cpu"] = "cuda" if profile.kind == "cuda" else "cpu"
    if policy not in ("lock", "verify", "observe"):
        raise ClockPolicyError(f"clocks={policy}: unknown policy (use lock, verify or observe)")
    if kind == "cpu" and policy != "observe":
        raise ClockPolicyError(f"clocks={policy} needs a GPU; this run is on the CPU (use clocks=observe)")
    guard = ClockGuard(policy, device_index, kind)
    if policy == "verify":
        verify_clocks(profile, device_index)
    if policy != "lock":
        yield guard
        return
    with _restored_on_exit(guard):  # handlers go in before the lock, so no signal can slip between the two
        _lock(guard, profile)
        log.info("clocks: locked to %s through %s", guard.locked, guard.method)
        yield guard

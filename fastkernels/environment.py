"""The environment fingerprint written to env.json: what a reader needs to reproduce or distrust a run.

Speedups move with the driver, CUDA, torch/triton versions, TF32 settings and the code itself, so all of them are
recorded next to the results. Every value is plain JSON; anything that cannot be read is None, never an error.

The installed packages are also compared with the hash-pinned lock file of the run's line (requirements/cpu.lock on the
CPU, requirements/gpu-cu<major><minor>.lock for the profile's cuda_version): `lock_file` names it and `lock_drift` lists
every locked package whose installed version differs, `{name: {"locked": v, "installed": v or None}}`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from fastkernels.clocks import read_clocks
from fastkernels.config import HardwareProfile
from fastkernels.hardware import DeviceInfo, profile_warnings

# Distributions whose versions change what is timed or how it is scored (names as pip knows them). The production
# kernel libraries are among them, with what changes which of their kernels run: flash-linear-attention 0.6
# dispatches its ops to TileLang kernels (FlashQLA's for the gated delta rule) wherever tilelang (or flash-qla) is
# installed, and Liger-Kernel 0.8 its ops to CuTe DSL kernels wherever nvidia-cutlass-dsl is, so the same `fla` or
# `liger` entry times other kernels there.
PACKAGES = (
    "torch", "triton", "transformers", "hydra-core", "omegaconf", "nvtx", "numpy", "jinja2", "pydantic",
    "nvidia-ml-py", "liger-kernel", "nvidia-cutlass-dsl", "flash-linear-attention", "fla-core", "tilelang",
    "flash-qla", "sglang", "apache-tvm-ffi", "nvidia-cudnn-frontend", "mambapy", "fastkernels",
)

# Variables that change which device is used, how kernels compile, or how they run.
ENV_VARS = (
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_PRINT_AUTOTUNING", "TORCH_CUDA_ARCH_LIST",
    "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_MAX_AUTOTUNE", "TORCH_COMPILE_DEBUG", "PYTORCH_CUDA_ALLOC_CONF",
    "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "FASTKERNELS_LOCK_FILE", "FASTKERNELS_CONTAINER_IMAGE",
    "FASTKERNELS_TUNING_PICKS",  # autotuning picks restored from an earlier machine (scripts/tuning_picks.py)
)
# Prefixes of variables recorded wherever set: flash-linear-attention's backend switches (FLA_TILELANG,
# FLA_FLASH_QLA, FLA_DISABLE_BACKEND_DISPATCH, FLA_INTRACARD_CP, ...) and Liger-Kernel's LIGER_KERNEL_IMPL choose
# which of their kernels run.
ENV_PREFIXES = ("FLA_", "LIGER_")

# Slurm's description of the job a run is (set in every Slurm job): which job, array element, partition and nodes
# produced a leaderboard row, so it can be traced in the cluster's own records.
SLURM_VARS = (
    "SLURM_CLUSTER_NAME", "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",
)


def scheduler_state() -> dict[str, str] | None:
    """The Slurm job this process runs in ({"kind": "slurm", <variable>: <value>}), None outside a scheduler."""
    found = {name: os.environ[name] for name in SLURM_VARS if os.environ.get(name)}
    return {"kind": "slurm", **found} if found else None


def recorded_environment(environ: Mapping[str, str]) -> dict[str, str | None]:
    """Every ENV_VARS name (None where unset) and every set variable that starts with one of ENV_PREFIXES."""
    recorded: dict[str, str | None] = {name: environ.get(name) for name in ENV_VARS}
    recorded.update({name: value for name, value in sorted(environ.items()) if name.startswith(ENV_PREFIXES)})
    return recorded


def package_versions() -> dict[str, str | None]:
    """Installed version of each distribution in PACKAGES, None where it is absent."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


LOCK_DIR = "requirements"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?\s*$")


def canonical_name(name: str) -> str:
    """PEP 503's normalised distribution name: `Jinja2`, `typing_extensions` -> `jinja2`, `typing-extensions`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_file_for(device_kind: str, cuda_version: str | None, project_root: Path) -> Path:
    """The lock file of a run's line: cpu.lock on the CPU, gpu-cu<major><minor>.lock for a CUDA profile.
    FASTKERNELS_LOCK_FILE names another (a container or a Nix shell installed from a different lock)."""
    if os.environ.get("FASTKERNELS_LOCK_FILE"):
        return Path(os.environ["FASTKERNELS_LOCK_FILE"])
    if device_kind != "cuda":
        return project_root / LOCK_DIR / "cpu.lock"
    line = "cu" + "".join((cuda_version or "unknown").split(".")[:2])
    return project_root / LOCK_DIR / f"gpu-{line}.lock"


def _marker_applies(marker: str | None) -> bool:
    """Whether an environment marker (`; sys_platform == 'linux'`) holds here; True when it cannot be judged."""
    if not marker:
        return True
    try:
        from packaging.markers import Marker

        return bool(Marker(marker).evaluate())
    except Exception:
        return True


def read_lock(path: Path) -> dict[str, str]:
    """`name==version` pins of a pip/uv requirements lock (hash and comment lines skipped), by canonical name."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _PIN.match(line.strip())
        if match and _marker_applies(match.group(3)):
            pins[canonical_name(match.group(1))] = match.group(2)
    return pins


def _same_version(locked: str, installed: str) -> bool:
    try:
        from packaging.version import Version

        return Version(locked) == Version(installed)
    except Exception:
        return locked == installed


def lock_drift(pins: dict[str, str], installed: dict[str, str | None] | None = None) -> dict[str, dict[str, str | None]]:
    """Every locked package whose installed version differs from its pin (None: not installed)."""
    drift: dict[str, dict[str, str | None]] = {}
    for name, locked in sorted(pins.items()):
        if installed is not None:
            have = installed.get(name)
        else:
            try:
                have = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                have = None
        if have is None or not _same_version(locked, have):
            drift[name] = {"locked": locked, "installed": have}
    return drift


def lock_state(device_kind: str, cuda_version: str | None, project_root: Path) -> dict[str, Any]:
    """env.json's `lock_file` (path relative to the project where it lies there, its sha256) and `lock_drift`
    (None when the line has no lock file)."""
    path = lock_file_for(device_kind, cuda_version, project_root)
    try:
        shown = str(path.resolve().relative_to(project_root.resolve()))
    except ValueError:
        shown = str(path)
    if not path.is_file():
        return {"lock_file": shown, "lock_sha256": None, "lock_drift": None}
    try:
        data = path.read_bytes()
        return {"lock_file": shown, "lock_sha256": hashlib.sha256(data).hexdigest(),
                "lock_drift": lock_drift(read_lock(path))}
    except (OSError, UnicodeDecodeError):
        return {"lock_file": shown, "lock_sha256": None, "lock_drift": None}


def drift_message(environment: dict[str, Any]) -> str | None:
    """One log line naming the packages that differ from the lock, or None when nothing drifted."""
    drift = environment.get("lock_drift")
    if not drift:
        return None
    shown = ", ".join(f"{name} {entry['installed'] or 'missing'} (locked {entry['locked']})"
                      for name, entry in list(drift.items())[:8])
    more = f" and {len(drift) - 8} more" if len(drift) > 8 else ""
    return (f"environment differs from {environment.get('lock_file')}: {len(drift)} package(s): {shown}{more}; "
            f"env.json lock_drift lists them (scripts/lock.sh, containers/ and flake.nix give the locked stack)")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(root: Path) -> dict[str, Any]:
    """HEAD commit and whether the tree differs from it (untracked files count: they may be imported).

    A copy of the tree without .git (a container build, a lent GPU machine) reports the commit that
    FASTKERNELS_GIT_COMMIT names, as `git_source: env`, so its numbers still point at the code that made them.
    """
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain")
    if commit is None and os.environ.get("FASTKERNELS_GIT_COMMIT"):
        return {"git_commit": os.environ["FASTKERNELS_GIT_COMMIT"], "git_dirty": None, "git_source": "env"}
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None, "git_source": "git"}


# What makes a run's rows, besides the installed packages: the package, its configs, tasks and agents, the pinned
# requirements, and the scripts a device session runs around `python -m fastkernels`.
HARNESS_PATHS = ("fastkernels", "conf", "tasks", "agents", "pyproject.toml", "requirements",
                 "scripts/device-session.sh", "scripts/device-lanes.sh", "scripts/device-env.sh",
                 "scripts/tuning_picks.py")


def harness_digest(root: Path) -> dict[str, Any]:
    """sha256 over the HARNESS_PATHS files' relative paths and bytes (caches and compiled Python left out): the code
    that made the rows, named by content, where a copied tree's git metadata can name another commit (a lent GPU
    machine's copy named its branch tip while it ran a detached checkout, 2026-12-01)."""
    digest = hashlib.sha256()
    count = 0
    for top in HARNESS_PATHS:
        start = root / top
        files = [start] if start.is_file() else sorted(path for path in start.rglob("*") if path.is_file())
        for path in files:
            relative = path.relative_to(root)
            if "__pycache__" in relative.parts or path.suffix == ".pyc":
                continue
            digest.update(relative.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
            count += 1
    return {"harness_sha256": digest.hexdigest(), "harness_files": count}


def _torch_state() -> dict[str, Any]:
    """CUDA/cuDNN versions and the numeric switches that change what a matmul or convolution computes."""
    import torch

    def read(fn: Any) -> Any:
        try:
            return fn()
        except Exception:
            return None

    return {
        "cuda_runtime": torch.version.cuda,
        "cudnn": read(torch.backends.cudnn.version),
        "matmul_allow_tf32": read(lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
        "cudnn_allow_tf32": read(lambda: bool(torch.backends.cudnn.allow_tf32)),
        "float32_matmul_precision": read(torch.get_float32_matmul_precision),
        "deterministic_algorithms": read(torch.are_deterministic_algorithms_enabled),
        "num_threads": read(torch.get_num_threads),
    }


def fingerprint(device: DeviceInfo, profile: HardwareProfile, project_root: Path) -> dict[str, Any]:
    """The env.json record for a run on `device` scored against `profile`."""
    clocks = read_clocks(device.device_index) if device.kind == "cuda" else None
    return {
        "device": device.model_dump(mode="json"),
        "profile": profile.name,
        "profile_warnings": profile_warnings(profile, device),
        "clocks": clocks.model_dump(mode="json") if clocks is not None else None,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "packages": package_versions(),
        **_torch_state(),
        **git_state(project_root),
        **harness_digest(project_root),
        "env": recorded_environment(os.environ),
        "scheduler": scheduler_state(),
        **lock_state(device.kind, profile.cuda_version, project_root),
    }

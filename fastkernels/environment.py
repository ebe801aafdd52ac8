"""The environment fingerprint written to env.json: what a reader needs to reproduce or distrust a run.

Speedups move with the driver, CUDA, torch/triton versions, TF32 settings and the code itself, so all of them are
recorded next to the results. Every value is plain JSON; anything that cannot be read is None, never an error.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from fastkernels.clocks import read_clocks
from fastkernels.config import HardwareProfile
from fastkernels.hardware import DeviceInfo, profile_warnings

# Distributions whose versions change what is timed or how it is scored (names as pip knows them).
PACKAGES = (
    "torch", "triton", "transformers", "hydra-core", "omegaconf", "nvtx", "numpy", "jinja2", "pydantic",
    "nvidia-ml-py", "liger-kernel", "fastkernels",
)

# Variables that change which device is used, how kernels compile, or how they run.
ENV_VARS = (
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_PRINT_AUTOTUNING", "TORCH_CUDA_ARCH_LIST",
    "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_MAX_AUTOTUNE", "TORCH_COMPILE_DEBUG", "PYTORCH_CUDA_ALLOC_CONF",
    "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
)


def package_versions() -> dict[str, str | None]:
    """Installed version of each distribution in PACKAGES, None where it is absent."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


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
        "env": {name: os.environ.get(name) for name in ENV_VARS},
    }

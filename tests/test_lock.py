"""The hash-pinned lock files (requirements/*.lock) and env.json's comparison of the installed packages against them.

Pure Python (no torch, no Hydra run): the Nix flake's `pure-tests` check runs this file too."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from fastkernels.environment import (
    canonical_name, drift_message, lock_drift, lock_file_for, lock_state, read_lock,
)

ROOT = Path(__file__).resolve().parent.parent
LOCKS = sorted((ROOT / "requirements").glob("*.lock"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirement_name(spec: str) -> str:
    return canonical_name(re.match(r"[A-Za-z0-9._-]+", spec).group(0))


def test_there_is_a_cpu_lock_and_a_lock_for_every_cuda_line_a_hardware_profile_names():
    assert {path.name for path in LOCKS} >= {"cpu.lock", "gpu-cu128.lock"}
    for profile in (ROOT / "conf" / "hardware").glob("*.yaml"):
        data = yaml.safe_load(profile.read_text())
        if data.get("kind") == "cuda":
            assert lock_file_for("cuda", data["cuda_version"], ROOT).is_file(), profile.name


@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_every_pin_is_exact_and_hash_checked(lock):
    blocks = re.split(r"^(?=[A-Za-z0-9])", lock.read_text(), flags=re.M)
    pins = [block for block in blocks if re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*==", block)]
    assert len(pins) == len(read_lock(lock)) > 20
    assert [block.split("==")[0] for block in pins if "--hash=sha256:" not in block] == []


@pytest.mark.parametrize("lock, extras", [("cpu.lock", ["test"]), ("gpu-cu128.lock", ["test", "production"])])
def test_each_lock_pins_every_dependency_the_project_declares(lock, extras):
    pins = read_lock(ROOT / "requirements" / lock)
    declared = PYPROJECT["project"]["dependencies"] + extra_requirements(extras)
    assert [spec for spec in declared if requirement_name(spec) not in pins] == []


def extra_requirements(extras: list[str]) -> list[str]:
    """The requirements of these extras, an extra that names the project's own (`fastkernels[cudnn]`) expanded."""
    specs = []
    for extra in extras:
        for spec in PYPROJECT["project"]["optional-dependencies"][extra]:
            own = re.fullmatch(r"fastkernels\[([\w,]+)\]", spec)
            specs += extra_requirements(own.group(1).split(",")) if own else [spec]
    return specs


def test_the_cpu_lock_is_the_cpu_torch_and_the_cu128_lock_a_cuda_12_8_stack():
    cpu, gpu = read_lock(ROOT / "requirements" / "cpu.lock"), read_lock(ROOT / "requirements" / "gpu-cu128.lock")
    assert cpu["torch"].endswith("+cpu") and not any(name.startswith("nvidia-cu") for name in cpu)
    assert gpu["nvidia-cuda-runtime-cu12"].startswith("12.8.") and gpu["nvidia-cuda-nvrtc-cu12"].startswith("12.8.")
    assert gpu["triton"] and gpu["liger-kernel"] and "+" not in gpu["torch"]


def test_read_lock_normalises_names_and_skips_hashes_comments_and_foreign_markers(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("# header\n--extra-index-url https://example.invalid/simple\n"
                    "Jinja2==3.1.6 \\\n    --hash=sha256:" + "0" * 64 + "\n    # via torch\n"
                    "typing_extensions==4.16.0\n"
                    "pywin32==311 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "1" * 64 + "\n"
                    "torch==2.13.0+cpu \\\n    --hash=sha256:" + "2" * 64 + "\n")
    assert read_lock(lock) == {"jinja2": "3.1.6", "typing-extensions": "4.16.0", "torch": "2.13.0+cpu"}


def test_drift_lists_changed_and_missing_packages_only():
    pins = {"torch": "2.13.0+cpu", "numpy": "2.4.6", "triton": "3.9.0", "pyyaml": "6.0"}
    installed = {"torch": "2.13.0+cpu", "numpy": "2.5.0", "pyyaml": "6.0.0"}
    assert lock_drift(pins, installed) == {"numpy": {"locked": "2.4.6", "installed": "2.5.0"},
                                           "triton": {"locked": "3.9.0", "installed": None}}
    message = drift_message({"lock_file": "requirements/cpu.lock", "lock_drift": lock_drift(pins, installed)})
    assert message.count("\n") == 0 and "requirements/cpu.lock: 2 package(s)" in message
    assert "numpy 2.5.0 (locked 2.4.6)" in message and "triton missing (locked 3.9.0)" in message
    assert drift_message({"lock_file": "x", "lock_drift": {}}) is None


def test_the_lock_follows_the_device_kind_and_cuda_line_unless_named(tmp_path, monkeypatch):
    monkeypatch.delenv("FASTKERNELS_LOCK_FILE", raising=False)
    assert lock_file_for("cpu", None, tmp_path) == tmp_path / "requirements" / "cpu.lock"
    assert lock_file_for("cuda", "12.8", tmp_path) == tmp_path / "requirements" / "gpu-cu128.lock"
    assert lock_file_for("cuda", "13.0.1", tmp_path) == tmp_path / "requirements" / "gpu-cu130.lock"
    monkeypatch.setenv("FASTKERNELS_LOCK_FILE", str(tmp_path / "mine.lock"))
    assert lock_file_for("cuda", "12.8", tmp_path) == tmp_path / "mine.lock"


def test_lock_state_names_the_lock_its_hash_and_the_drift(tmp_path, monkeypatch):
    monkeypatch.delenv("FASTKERNELS_LOCK_FILE", raising=False)
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "cpu.lock").write_text("pyyaml==0.0.1 \\\n    --hash=sha256:" + "0" * 64 + "\n"
                                                        "fastkernels-no-such-package==1.0\n")
    state = lock_state("cpu", None, tmp_path)
    assert state["lock_file"] == "requirements/cpu.lock" and re.fullmatch(r"[0-9a-f]{64}", state["lock_sha256"])
    assert state["lock_drift"]["pyyaml"]["locked"] == "0.0.1" and state["lock_drift"]["pyyaml"]["installed"]
    assert state["lock_drift"]["fastkernels-no-such-package"] == {"locked": "1.0", "installed": None}
    assert lock_state("cuda", "11.8", tmp_path) == {"lock_file": "requirements/gpu-cu118.lock", "lock_sha256": None,
                                                    "lock_drift": None}

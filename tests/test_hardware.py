"""Hardware profiles, device detection, profile resolution and the env.json fingerprint (CPU only)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from fastkernels.config import CONF_DIR, ConfigError, HardwareProfile
from fastkernels.environment import fingerprint
from fastkernels.hardware import (
    DeviceInfo,
    HardwareMismatch,
    detect_device,
    load_profiles,
    profile_warnings,
    resolve_profile,
)

AUTO = HardwareProfile(name="auto")
H200 = DeviceInfo(kind="cuda", name="NVIDIA H200", compute_capability=(9, 0), sm_count=132, memory_gb=139.8,
                  l2_cache_mb=60.0, driver_version="570.00", cuda_runtime="12.8")
H100 = DeviceInfo(kind="cuda", name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), sm_count=132,
                  memory_gb=79.2, l2_cache_mb=50.0)
CPU = DeviceInfo(kind="cpu", name="Some CPU")


@pytest.fixture(scope="module")
def profiles() -> dict[str, HardwareProfile]:
    return load_profiles(CONF_DIR)


def test_every_profile_in_conf_loads_and_validates(profiles):
    on_disk = {path.stem for path in (CONF_DIR / "hardware").glob("*.yaml")} - {"auto"}
    assert set(profiles) == on_disk >= {"cpu", "a100", "h100", "h200", "b200"}
    assert all(profile.kind in ("cpu", "cuda") for profile in profiles.values())
    assert all(profile.gpu_name_pattern for profile in profiles.values() if profile.kind == "cuda")


def test_a_profile_whose_name_is_not_its_file_name_is_rejected(tmp_path):
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "h300.yaml").write_text("name: h200\nkind: cuda\ngpu_name_pattern: H300\n")
    with pytest.raises(ConfigError, match="must equal the file name"):
        load_profiles(tmp_path)


def test_without_cuda_detect_device_reports_the_cpu():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    device = detect_device()
    assert device.kind == "cpu" and device.name and device.sm_count is None


def test_detect_device_converts_torch_properties_to_datasheet_units(monkeypatch):
    props = SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                            total_memory=150_754_820_096, L2_cache_size=62_914_560)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    device = detect_device(0)
    assert (device.kind, device.name) == ("cuda", "NVIDIA H200")
    assert device.compute_capability == (9, 0) and device.sm_count == 132
    assert device.memory_gb == pytest.approx(140.4, abs=0.1) and device.l2_cache_mb == 60.0
    with pytest.raises(HardwareMismatch, match="CUDA device 1 does not exist"):
        detect_device(1)


def test_auto_resolves_to_cpu_without_a_gpu(profiles):
    assert resolve_profile(AUTO, CPU, profiles).name == "cpu"


@pytest.mark.parametrize("device, expected", [(H200, "h200"), (H100, "h100")])
def test_auto_resolves_a_gpu_by_its_name(profiles, device, expected):
    assert resolve_profile(AUTO, device, profiles).name == expected


def test_auto_on_an_unknown_gpu_says_which_profiles_exist(profiles):
    device = DeviceInfo(kind="cuda", name="NVIDIA RTX 9090", compute_capability=(12, 0), sm_count=200)
    with pytest.raises(HardwareMismatch) as error:
        resolve_profile(AUTO, device, profiles)
    message = str(error.value)
    assert "\n" not in message and "NVIDIA RTX 9090" in message
    assert "a100, b200, cpu, h100, h200" in message and "add conf/hardware/" in message


def test_a_gpu_profile_on_another_gpu_is_a_one_line_error_naming_both(profiles):
    with pytest.raises(HardwareMismatch) as error:
        resolve_profile(profiles["h100"], H200, profiles)
    assert str(error.value) == (
        "hardware=h100 expects a GPU matching 'H100 80GB HBM3|H100 SXM' but device 0 is 'NVIDIA H200'; "
        "choose hardware=auto or hardware=h200"
    )


def test_a_gpu_profile_without_a_gpu_is_a_one_line_error(profiles):
    with pytest.raises(HardwareMismatch) as error:
        resolve_profile(profiles["h200"], CPU, profiles)
    assert "\n" not in str(error.value) and "no CUDA device" in str(error.value)


def test_the_cpu_profile_is_allowed_on_any_device(profiles):
    assert resolve_profile(profiles["cpu"], H200, profiles).name == "cpu"
    assert resolve_profile(profiles["cpu"], CPU, profiles).name == "cpu"


def test_a_concrete_profile_keeps_its_overrides(profiles):
    overridden = profiles["h200"].model_copy(update={"peak_memory_bandwidth_gbs": 4000.0})
    assert resolve_profile(overridden, H200, profiles).peak_memory_bandwidth_gbs == 4000.0


def test_a_matching_name_with_other_figures_warns_but_resolves(profiles):
    odd = DeviceInfo(kind="cuda", name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), sm_count=114, l2_cache_mb=50.0)
    assert resolve_profile(profiles["h100"], odd, profiles).name == "h100"
    warnings = profile_warnings(profiles["h100"], odd)
    assert len(warnings) == 1 and "SM count 132 in the profile but 114 on the device" in warnings[0]
    assert profile_warnings(profiles["h200"], H200) == []
    assert profile_warnings(profiles["h200"], H200.model_copy(update={"compute_capability": (10, 0)}))


def test_an_h100_pcie_is_not_scored_with_the_sxm_profile(profiles):
    pcie = DeviceInfo(kind="cuda", name="NVIDIA H100 PCIe", compute_capability=(9, 0), sm_count=114, l2_cache_mb=50.0)
    with pytest.raises(HardwareMismatch, match="H100 PCIe"):
        resolve_profile(profiles["h100"], pcie, profiles)


def test_fingerprint_is_json_and_records_the_code_version(profiles):
    record = fingerprint(CPU, profiles["cpu"], Path(__file__).resolve().parent.parent)
    assert json.loads(json.dumps(record)) == record
    assert {"git_commit", "git_dirty", "device", "profile", "packages", "cuda_runtime", "env"} <= set(record)
    assert record["profile"] == "cpu" and record["device"]["kind"] == "cpu" and record["clocks"] is None
    assert record["packages"]["torch"] is not None and "CUDA_VISIBLE_DEVICES" in record["env"]


def test_fingerprint_records_the_production_libraries_and_their_backend_switches(profiles, monkeypatch):
    # flash-linear-attention picks TileLang kernels where tilelang or flash-qla is installed, Liger-Kernel CuTe DSL
    # kernels where nvidia-cutlass-dsl is, unless FLA_* or LIGER_KERNEL_IMPL says otherwise: the same `fla` or
    # `liger` entry then times other kernels, so a row must say which
    monkeypatch.setenv("FLA_FLASH_QLA", "0")
    monkeypatch.setenv("LIGER_KERNEL_IMPL", "cutile")
    record = fingerprint(CPU, profiles["cpu"], Path(__file__).resolve().parent.parent)
    assert {"flash-linear-attention", "tilelang", "flash-qla", "nvidia-cutlass-dsl", "sglang",
            "nvidia-cudnn-frontend"} <= set(record["packages"])
    assert record["env"]["FLA_FLASH_QLA"] == "0" and record["env"]["LIGER_KERNEL_IMPL"] == "cutile"


def test_fingerprint_names_the_slurm_job_a_run_came_from(profiles, monkeypatch):
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_PARTITION", "SLURM_CLUSTER_NAME",
                 "SLURM_JOB_NODELIST"):
        monkeypatch.delenv(name, raising=False)
    assert fingerprint(CPU, profiles["cpu"], Path(__file__).resolve().parent.parent)["scheduler"] is None
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_JOB_PARTITION", "gpu")
    record = fingerprint(CPU, profiles["cpu"], Path(__file__).resolve().parent.parent)
    assert record["scheduler"] == {"kind": "slurm", "SLURM_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": "1",
                                   "SLURM_JOB_PARTITION": "gpu"}


def test_fingerprint_reads_commit_and_dirty_flag(tmp_path, profiles):
    assert fingerprint(CPU, profiles["cpu"], tmp_path)["git_commit"] is None
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    (tmp_path / "a.txt").write_text("a")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    clean = fingerprint(CPU, profiles["cpu"], tmp_path)
    assert len(clean["git_commit"]) == 40 and clean["git_dirty"] is False
    (tmp_path / "a.txt").write_text("b")
    assert fingerprint(CPU, profiles["cpu"], tmp_path)["git_dirty"] is True


def test_a_tree_without_git_reports_the_commit_it_was_told(tmp_path, monkeypatch):
    from fastkernels.environment import git_state

    monkeypatch.setenv("FASTKERNELS_GIT_COMMIT", "abc123")
    assert git_state(tmp_path) == {"git_commit": "abc123", "git_dirty": None, "git_source": "env"}
    monkeypatch.delenv("FASTKERNELS_GIT_COMMIT")
    assert git_state(tmp_path)["git_commit"] is None


def test_a_gpus_uuid_is_recorded_as_nvidia_smi_prints_it():
    # torch reports the UUID without nvidia-smi's "GPU-" prefix; a torch without the field records none
    from uuid import UUID

    from fastkernels.hardware import _gpu_uuid

    value = UUID("5c0a0d1c-8e36-4b56-9a31-2f1d3e4c5b6a")
    assert _gpu_uuid(SimpleNamespace(uuid=value)) == "GPU-5c0a0d1c-8e36-4b56-9a31-2f1d3e4c5b6a"
    assert _gpu_uuid(SimpleNamespace()) is None

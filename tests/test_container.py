"""runner=container: the composed docker/apptainer commands, checked against fake engines on PATH that log their argv,
and the host-side clock lock around the container, checked against a fake NVML. No container engine or GPU needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from fastkernels.config import CONF_DIR, PROJECT_ROOT, ConfigError, HardwareProfile, RunConfig
from fastkernels.container import (
    CONTAINER_OUT, CONTAINER_PROJECT, ContainerError, inner_overrides, plan, resolve_host_profile, run_in_container,
)

H100 = HardwareProfile.model_validate(OmegaConf.to_container(OmegaConf.load(CONF_DIR / "hardware" / "h100.yaml")))
CPU = HardwareProfile.model_validate(OmegaConf.to_container(OmegaConf.load(CONF_DIR / "hardware" / "cpu.yaml")))

FAKE_ENGINE = textwrap.dedent('''\
    #!{python}
    """A stand-in for docker/podman/apptainer: logs its argv; `image inspect` answers; `run`/`exec` writes a stub env.json
    into the /out mount (FAKE_ENGINE_MODE=log), exits 3 (fail), or composes the inner command's config on the host
    (cfg)."""
    import json, os, subprocess, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_ENGINE_LOG"], "a") as log:
        log.write(json.dumps({{"engine": os.path.basename(sys.argv[0]), "argv": args}}) + "\\n")
    if args[:2] == ["image", "inspect"]:
        if os.environ.get("FAKE_NO_IMAGE"):
            print("Error: No such image: " + args[-1], file=sys.stderr)
            sys.exit(1)
        print("sha256:" + "ab" * 32)
        sys.exit(0)
    mode = os.environ.get("FAKE_ENGINE_MODE", "log")
    if mode == "fail":
        sys.exit(3)
    mounts = {{}}
    for flag, value in zip(args, args[1:]):
        if flag == "-v":
            host, inside = value.split(":")[:2]
            mounts[inside] = host
        if flag == "--bind":
            for spec in value.split(","):
                host, inside = spec.split(":")[:2]
                mounts[inside] = host
    start = next(i for i in range(len(args)) if args[i:i + 3] == ["python", "-m", "fastkernels"])
    out = mounts["{out}"]
    if mode == "log":
        with open(os.path.join(out, "env.json"), "w") as handle:
            json.dump({{"device": {{"name": "fake"}}, "clock_policy": {{"policy": "observe"}}}}, handle)
        sys.exit(0)
    inner = [a.replace("{out}", out) if a.startswith("hydra.run.dir=") else a for a in args[start + 1:]]
    # mode "cfg": compose the inner config (Hydra's --cfg job) into /out/inner_config.yaml instead of running it
    done = subprocess.run([{python!r}, *inner, "--cfg", "job"], cwd=mounts.get("{project}"), capture_output=True,
                          text=True)
    with open(os.path.join(out, "inner_config.yaml"), "w") as handle:
        handle.write(done.stdout)
    with open(os.path.join(out, "env.json"), "w") as handle:
        json.dump({{"device": {{"name": "fake"}}}}, handle)
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
''')


@pytest.fixture
def engines(tmp_path, monkeypatch):
    """Fake `docker`, `podman` and `apptainer` first on PATH; returns a reader of their logged calls."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    script = FAKE_ENGINE.format(python=sys.executable, out=CONTAINER_OUT, project=CONTAINER_PROJECT)
    for name in ("docker", "podman", "apptainer"):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "engine.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def calls() -> list[dict]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    calls.log = log  # type: ignore[attr-defined]
    calls.bin = bin_dir  # type: ignore[attr-defined]
    return calls


def composed(*overrides: str) -> RunConfig:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return RunConfig.from_omegaconf(compose(config_name="config", overrides=["runner=container", *overrides]))


def fake_nvml(log: Path, name: str = "NVIDIA H100 80GB HBM3") -> types.ModuleType:
    """A pynvml stand-in naming one GPU; lock/reset calls go to the engines' log, so their order can be checked."""
    lib = types.ModuleType("pynvml")

    def record(call: str):
        def fn(*args):
            with log.open("a") as handle:
                handle.write(json.dumps({"nvml": call, "args": [a for a in args if isinstance(a, int)]}) + "\n")
        return fn

    lib.nvmlInit = lambda: None
    lib.nvmlDeviceGetHandleByIndex = lambda index: f"gpu{index}"
    lib.nvmlDeviceGetName = lambda handle: name
    lib.nvmlSystemGetDriverVersion = lambda: "580.00"
    for call in ("nvmlDeviceSetGpuLockedClocks", "nvmlDeviceSetMemoryLockedClocks",
                 "nvmlDeviceResetGpuLockedClocks", "nvmlDeviceResetMemoryLockedClocks"):
        setattr(lib, call, record(call))
    return lib


def option(command: list[str], flag: str) -> list[str]:
    return [value for key, value in zip(command, command[1:]) if key == flag]


def test_inner_overrides_keep_the_run_and_leave_hardware_clocks_and_runner_to_the_host():
    given = ["hardware=auto", "agent=noop", "tasks=level1", "tasks.include=[rms_norm,silu_and_mul]", "runner=container",
             "runner.engine=apptainer", "clocks=lock", "+harness.seed=3", "hardware.l2_cache_mb=61", "hydra.verbose=true"]
    inner = inner_overrides(given, "h200", None)
    assert inner == ["hardware=h200", "agent=noop", "tasks=level1", "tasks.include=[rms_norm,silu_and_mul]",
                     "+harness.seed=3", "hardware.l2_cache_mb=61", "clocks=observe", "runner=local",
                     f"hydra.run.dir={CONTAINER_OUT}", "hydra.output_subdir=.hydra-container"]
    moved = inner_overrides(["agent=local", "agent.path=/home/me/kernels"], "cpu", "/home/me/kernels")
    assert moved.count("agent.path=/home/me/kernels") == 1


def test_docker_command_for_a_gpu_profile(engines, tmp_path, monkeypatch):
    config = composed("hardware=h100", "agent=noop", "tasks=level1")
    container = plan(config, tmp_path / "run", ["hardware=h100", "agent=noop", "tasks=level1", "runner=container"], H100)
    command = container.command
    assert Path(command[0]).name == "docker" and command[1:4] == ["run", "--rm", "--init"]
    assert option(command, "--gpus") == ["device=0"] and option(command, "--network") == ["none"]
    assert f"{(tmp_path / 'run').resolve()}:/out" in option(command, "-v")
    assert f"{PROJECT_ROOT.resolve()}:{CONTAINER_PROJECT}:ro" in option(command, "-v")
    assert option(command, "--user") == [f"{os.getuid()}:{os.getgid()}"]
    environment = option(command, "-e")
    assert "FASTKERNELS_CONTAINER_IMAGE=fastkernels:cu128" in environment and "PYTHONUNBUFFERED=1" in environment
    start = command.index("fastkernels:cu128")
    assert command[start + 1:] == ["python", "-m", "fastkernels", "hardware=h100", "agent=noop", "tasks=level1",
                                   "clocks=observe", "runner=local", "hydra.run.dir=/out",
                                   "hydra.output_subdir=.hydra-container"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert option(plan(config, tmp_path, [], H100).command, "--gpus") == ["device=3"]


def test_podman_takes_dockers_command_with_the_gpu_through_cdi(engines, tmp_path, monkeypatch):
    overrides = ["hardware=h100", "agent=noop", "tasks=level1", "runner=container", "runner.engine=podman"]
    config = composed("hardware=h100", "agent=noop", "tasks=level1", "runner.engine=podman")
    monkeypatch.setattr(os, "getuid", lambda: 0)
    command = plan(config, tmp_path / "run", overrides, H100).command
    assert Path(command[0]).name == "podman" and command[1:4] == ["run", "--rm", "--init"]
    assert option(command, "--device") == ["nvidia.com/gpu=0"] and "--gpus" not in command
    assert option(command, "--user") and option(command, "--network") == ["none"]
    docker = plan(composed("hardware=h100", "agent=noop", "tasks=level1"), tmp_path / "run", overrides, H100).command
    assert command[command.index("fastkernels:cu128"):] == docker[docker.index("fastkernels:cu128"):]
    monkeypatch.setattr(os, "getuid", lambda: 1000)  # rootless: the host user owns what the container writes
    rootless = plan(config, tmp_path / "run", overrides, H100).command
    assert "--userns=keep-id" in rootless and not option(rootless, "--user")


def test_a_missing_podman_image_names_the_podman_build(engines, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NO_IMAGE", "1")
    with pytest.raises(ContainerError, match="podman has no image fastkernels:cpu .*build-images.sh cpu --engine podman"):
        run_in_container(composed("hardware=cpu", "agent=noop", "runner.engine=podman"), tmp_path, [], CPU)


def test_the_image_follows_the_profile_unless_runner_image_names_one(engines, tmp_path):
    cpu = plan(composed("hardware=cpu", "agent=noop"), tmp_path, [], CPU).command
    assert "fastkernels:cpu" in cpu and "--gpus" not in cpu
    mine = plan(composed("hardware=h100", "agent=noop", "runner.image='registry.example/fk@sha256:" + "0" * 64 + "'"),
                tmp_path, [], H100)
    assert mine.image.startswith("registry.example/fk@sha256:") and mine.image in mine.command
    extra = plan(composed("hardware=h100", "agent=noop", "runner.extra_args=['--shm-size=8g']", "runner.network=null"),
                 tmp_path, [], H100).command
    assert extra.index("--shm-size=8g") < extra.index("fastkernels:cu128") and "--network" not in extra


def test_apptainer_command_binds_the_run_dir_and_selects_the_gpu(engines, tmp_path):
    sif = tmp_path / "fk.sif"
    sif.write_bytes(b"SIF")
    config = composed("hardware=h100", "agent=noop", "runner.engine=apptainer", f"runner.image={sif}")
    command = plan(config, tmp_path / "run", ["agent=noop"], H100).command
    assert Path(command[0]).name == "apptainer" and command[1:3] == ["exec", "--cleanenv"] and "--nv" in command
    assert "CUDA_VISIBLE_DEVICES=0" in option(command, "--env")
    binds = option(command, "--bind")[0].split(",")
    assert f"{(tmp_path / 'run').resolve()}:/out:rw" in binds and f"{PROJECT_ROOT.resolve()}:{CONTAINER_PROJECT}:ro" in binds
    assert command[command.index(str(sif.resolve())) + 1:][:4] == ["python", "-m", "fastkernels", "hardware=h100"]


def test_apptainer_without_a_built_image_names_the_build_command(engines, tmp_path):
    with pytest.raises(ContainerError, match="scripts/build-images.sh cu128 --engine apptainer") as error:
        plan(composed("hardware=h100", "agent=noop", "runner.engine=apptainer"), tmp_path, [], H100)
    assert "\n" not in str(error.value) and "containers/fastkernels_cu128.sif" in str(error.value)
    uri = plan(composed("hardware=h100", "agent=noop", "runner.engine=apptainer",
                        "runner.image=docker-daemon://fastkernels:cu128"), tmp_path, [], H100)
    assert "docker-daemon://fastkernels:cu128" in uri.command


def test_candidates_outside_the_tree_are_mounted_read_only_at_the_same_path(engines, tmp_path):
    kernels = tmp_path / "kernels"
    (kernels / "L1").mkdir(parents=True)
    config = composed("hardware=cpu", "agent=local", f"agent.path={kernels}")
    command = plan(config, tmp_path / "run", ["agent=local", f"agent.path={kernels}"], CPU).command
    assert f"{kernels}:{kernels}:ro" in option(command, "-v")
    assert [a for a in command if a.startswith("agent.path=")] == [f"agent.path={kernels}"]
    reference = plan(composed("hardware=cpu", "agent=reference"), tmp_path / "run", [], CPU).command
    assert f"agent.path={CONTAINER_PROJECT}/agents/reference" in reference


def test_a_missing_engine_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ContainerError, match="docker not found on PATH"):
        plan(composed("hardware=cpu", "agent=noop"), tmp_path, [], CPU)
    with pytest.raises(ContainerError, match="apptainer or singularity not found"):
        plan(composed("hardware=cpu", "agent=noop", "runner.engine=apptainer"), tmp_path, [], CPU)


def test_clocks_are_locked_on_the_host_before_the_container_and_restored_after(engines, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(engines.log))
    run_dir = tmp_path / "run"
    config = composed("hardware=h100", "agent=noop", "clocks=lock")
    run_in_container(config, run_dir, ["hardware=h100", "agent=noop", "clocks=lock", "runner=container"], H100)
    order = [entry.get("nvml") or " ".join(entry["argv"][:2]) for entry in engines()]
    assert order == ["image inspect", "nvmlDeviceSetGpuLockedClocks", "nvmlDeviceSetMemoryLockedClocks", "run --rm",
                     "nvmlDeviceResetMemoryLockedClocks", "nvmlDeviceResetGpuLockedClocks"]
    assert [entry for entry in engines() if entry.get("nvml")][0]["args"] == [1980, 1980]
    run = next(entry["argv"] for entry in engines() if entry.get("argv", [""])[0] == "run")
    assert "clocks=observe" in run and "clocks=lock" not in run
    record = json.loads((run_dir / "container.json").read_text())
    assert record["returncode"] == 0 and record["image_id"] == "sha256:" + "ab" * 32
    assert record["host_clock_policy"]["locked"] == {"graphics_mhz": 1980, "memory_mhz": 2619}
    assert record["host_clock_policy"]["restored_by"] == "exit"
    environment = json.loads((run_dir / "env.json").read_text())
    assert environment["container"]["image"] == "fastkernels:cu128" and environment["host_clock_policy"]["policy"] == "lock"


def test_a_container_run_inside_a_slurm_job_names_the_job_in_env_json(engines, tmp_path, monkeypatch):
    """The container does not see Slurm's variables; the host process that started it does."""
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "3")
    run_in_container(composed("hardware=cpu", "agent=noop"), tmp_path, ["agent=noop"], CPU)
    scheduler = json.loads((tmp_path / "env.json").read_text())["scheduler"]
    assert scheduler["kind"] == "slurm" and scheduler["SLURM_JOB_ID"] == "77" and scheduler["SLURM_ARRAY_TASK_ID"] == "3"


def test_a_failing_container_still_restores_clocks_and_fails_in_one_line(engines, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(engines.log))
    monkeypatch.setenv("FAKE_ENGINE_MODE", "fail")
    with pytest.raises(ContainerError, match="docker exited with status 3") as error:
        run_in_container(composed("hardware=h100", "agent=noop", "clocks=lock"), tmp_path, [], H100)
    assert "\n" not in str(error.value)
    assert [entry["nvml"] for entry in engines() if entry.get("nvml")][-2:] == [
        "nvmlDeviceResetMemoryLockedClocks", "nvmlDeviceResetGpuLockedClocks"]
    assert json.loads((tmp_path / "container.json").read_text())["returncode"] == 3


def test_a_missing_docker_image_stops_before_any_clock_is_touched(engines, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(engines.log))
    monkeypatch.setenv("FAKE_NO_IMAGE", "1")
    with pytest.raises(ContainerError, match="docker has no image fastkernels:cu128 .*scripts/build-images.sh cu128"):
        run_in_container(composed("hardware=h100", "agent=noop", "clocks=lock"), tmp_path, [], H100)
    assert not [entry for entry in engines() if entry.get("nvml")]


def test_dry_run_prints_the_command_and_runs_nothing(engines, tmp_path, capsys):
    run_in_container(composed("hardware=cpu", "agent=noop", "runner.dry_run=true"), tmp_path, ["agent=noop"], CPU)
    printed = capsys.readouterr().out
    assert "docker run --rm --init" in printed and "fastkernels:cpu python -m fastkernels hardware=cpu" in printed
    assert engines() == [] and not (tmp_path / "container.json").exists()


def test_the_host_names_the_gpu_through_nvml_when_its_torch_has_no_cuda(engines, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(engines.log, "NVIDIA H200"))
    assert resolve_host_profile(composed("agent=noop")).name == "h200"
    with pytest.raises(ConfigError, match="hardware=h100 expects a GPU"):
        resolve_host_profile(composed("hardware=h100", "agent=noop"))


CLI_PATCHED = "run_in_container" in (PROJECT_ROOT / "fastkernels" / "cli.py").read_text()


@pytest.mark.skipif(not CLI_PATCHED, reason="fastkernels/cli.py does not dispatch runner=container yet")
def test_cli_multirun_reinvokes_each_jobs_composed_config_inside_the_fake_container(engines, tmp_path):
    """`python -m fastkernels -m ... runner=container`: each job's command composes, inside, the config the host did."""
    env = {**os.environ, "FAKE_ENGINE_MODE": "cfg"}
    command = [sys.executable, "-m", "fastkernels", "-m", "hardware=cpu", "agent=noop,reference", "runner=container",
               "tasks.include=[silu_and_mul]", "harness.iterations=5", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = [entry["argv"] for entry in engines() if entry["argv"][0] == "run"]
    assert len(runs) == 2 and {a for argv in runs for a in argv if a.startswith("agent=")} == {"agent=noop",
                                                                                              "agent=reference"}
    for job in ("0_cpu_noop", "1_cpu_reference"):
        run_dir = tmp_path / "sweep" / job
        host = yaml.safe_load((run_dir / ".hydra" / "config.yaml").read_text())
        inner = yaml.safe_load((run_dir / "inner_config.yaml").read_text())
        assert host.pop("runner")["name"] == "container" and inner.pop("runner") == {"name": "local"}
        if host["agent"]["path"]:
            assert inner["agent"].pop("path") == f"{CONTAINER_PROJECT}/{host['agent'].pop('path')}"
        assert inner == host
        environment = json.loads((run_dir / "env.json").read_text())
        assert environment["container"]["image"] == "fastkernels:cpu" and environment["container"]["returncode"] == 0
        assert json.loads((run_dir / "container.json").read_text())["profile"] == "cpu"

"""`runner=container`: the same composed run, re-invoked inside the hardware profile's pinned image.

The host process (the one Hydra started with `runner=container`) resolves the hardware profile (NVML names the GPU when
the host's torch has no CUDA), picks the image (`runner.image`, else the profile's `container_image`), applies any
`clocks=lock`/`clocks=verify` policy on the host (a container cannot lock clocks) and then runs

    docker run --rm --init --gpus device=<gpu> --user <uid>:<gid> --network none -e ... \
        -v <run dir>:/out -v <source tree>:/opt/fastkernels:ro <image> \
        python -m fastkernels <the run's overrides> hardware=<profile> clocks=observe runner=local \
        hydra.run.dir=/out hydra.output_subdir=.hydra-container

or the same with `podman run` (the GPU through CDI: `--device nvidia.com/gpu=<gpu>`; rootless podman keeps the host
user with `--userns=keep-id`), or `apptainer exec --nv --cleanenv --env CUDA_VISIBLE_DEVICES=<gpu> --bind ...
<image.sif> python -m fastkernels ...`.
The clocks are restored when the container exits, however it exits. The host's own `.hydra/` (the overrides to pass
to re-run it, `runner=container` included) stays next to the container's `.hydra-container/`; `container.json`
records the engine, image, image id, command, exit status and host clock policy, and env.json gets the same under
`container` and `host_clock_policy`.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from fastkernels.artifacts import write_json
from fastkernels.config import CONF_DIR, PROJECT_ROOT, ConfigError, HardwareProfile, RunConfig

log = logging.getLogger("fastkernels")

CONTAINER_OUT = "/out"
CONTAINER_PROJECT = "/opt/fastkernels"
INNER_HYDRA_SUBDIR = ".hydra-container"
URI_PREFIXES = ("docker://", "docker-daemon:", "docker-archive:", "oci:", "oci-archive:", "oras://", "library://",
                "shub://", "http://", "https://")
# Host variables passed into the container when set (env.json's list minus the ones naming host devices or paths).
PASSED_ENV = (
    "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING", "TRITON_PRINT_AUTOTUNING",
    "TORCH_CUDA_ARCH_LIST", "TORCHINDUCTOR_MAX_AUTOTUNE", "TORCH_COMPILE_DEBUG", "PYTORCH_CUDA_ALLOC_CONF",
    "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
)


class ContainerError(ConfigError):
    """A container run that cannot start or did not finish; the message is one line."""


@dataclass
class ContainerPlan:
    """What runner=container will execute, before it runs (dry_run prints `command`)."""

    engine: str
    executable: str
    image: str
    profile: str
    gpu: str | None
    inner: list[str]
    command: list[str]
    mounts: list[list[str]] = field(default_factory=list)  # [host, container, mode]

    def shell(self) -> str:
        return shlex.join(self.command)


def _override_key(override: str) -> str:
    """`+harness.seed=3` -> `harness.seed`; `hydra/launcher=basic` -> `hydra/launcher`; `agent@x=y` -> `agent`."""
    text = override.lstrip("+~")
    key = text.split("=", 1)[0]
    return key.split("@", 1)[0].strip()


def inner_overrides(overrides: Sequence[str], profile: str, agent_path: str | None) -> list[str]:
    """The run's own command-line overrides, minus what the host decides (runner, hydra, hardware group, clocks group,
    agent.path), plus the host's decisions: the resolved profile, clocks=observe, the container's candidate path."""
    kept = []
    for override in overrides:
        key = _override_key(override)
        if key in ("runner", "hardware", "clocks") or key.startswith(("runner.", "hydra.", "hydra/", "clocks.")):
            continue
        if agent_path is not None and key == "agent.path":
            continue
        kept.append(override)
    extra = [f"hardware={profile}", *kept, "clocks=observe"]
    if agent_path is not None:
        extra.append(f"agent.path={agent_path}")
    return [*extra, "runner=local", f"hydra.run.dir={CONTAINER_OUT}", f"hydra.output_subdir={INNER_HYDRA_SUBDIR}"]


def host_gpu_id(index: int = 0) -> str:
    """The host's id (index or UUID) of CUDA device `index` as this process sees it (through CUDA_VISIBLE_DEVICES)."""
    visible = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    return visible[index] if index < len(visible) else str(index)


def host_device(index: int = 0) -> Any:
    """The device as the host sees it: torch's view, or NVML's name when the host's torch has no CUDA (a host that only
    launches containers need not carry a CUDA build of torch)."""
    from fastkernels.clocks import driver_version, nvml, nvml_handle
    from fastkernels.hardware import DeviceInfo, detect_device

    device = detect_device(index)
    if device.kind == "cuda":
        return device
    lib = nvml()
    if lib is None:
        return device
    try:
        name = lib.nvmlDeviceGetName(nvml_handle(lib, index))
    except Exception:
        return device
    name = name.decode() if isinstance(name, bytes) else str(name)
    return DeviceInfo(kind="cuda", name=name, driver_version=driver_version(), device_index=index)


def resolve_host_profile(config: RunConfig, device: Any | None = None) -> HardwareProfile:
    """The profile the run is scored against, resolved on the host exactly as the pipeline does."""
    from fastkernels.hardware import load_profiles, resolve_profile

    return resolve_profile(config.hardware, device if device is not None else host_device(),
                           load_profiles(CONF_DIR))


def engine_executable(engine: str) -> str:
    names = ["apptainer", "singularity"] if engine == "apptainer" else [engine]
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise ContainerError(f"runner=container: {' or '.join(names)} not found on PATH (runner.engine={engine})")


def resolve_image(config: RunConfig, profile: HardwareProfile, engine: str) -> str:
    """runner.image, else the profile's container_image; for apptainer a tag becomes containers/<name>_<tag>.sif."""
    image = config.runner.image or profile.container_image
    if not image:
        raise ContainerError(f"runner=container: hardware profile {profile.name} names no container_image; "
                             "set runner.image=...")
    if engine != "apptainer" or image.startswith(URI_PREFIXES):
        return image
    if image.endswith(".sif"):
        path = Path(image).expanduser()
        candidates = [path] if path.is_absolute() else [Path.cwd() / path, PROJECT_ROOT / path]
    else:
        name, _, tag = image.rpartition(":") if ":" in image else (image, "", "latest")
        sif = f"{name.replace('/', '_')}_{tag}.sif"
        candidates = [PROJECT_ROOT / "containers" / sif]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate.resolve())
    raise ContainerError(f"runner=container: no Apptainer image {candidates[0]} (build it with "
                         f"scripts/build-images.sh {image.rpartition(':')[2]} --engine apptainer, or set "
                         f"runner.image=docker-daemon://{image})")


def _candidate_mount(config: RunConfig) -> tuple[str | None, list[str] | None]:
    """The container's agent.path and the mount that makes it exist there (None when the project tree holds it)."""
    from fastkernels.pipeline import candidate_dir

    candidates = candidate_dir(config)
    if candidates is None:
        return None, None
    try:
        relative = candidates.relative_to(PROJECT_ROOT.resolve())
    except ValueError:
        return str(candidates), [str(candidates), str(candidates), "ro"]
    return f"{CONTAINER_PROJECT}/{relative.as_posix()}", None


def plan(config: RunConfig, run_dir: Path, overrides: Sequence[str], profile: HardwareProfile,
         environ: dict[str, str] | None = None) -> ContainerPlan:
    """Compose the engine command for this run (nothing is executed)."""
    environ = dict(os.environ if environ is None else environ)
    engine = config.runner.engine
    executable = engine_executable(engine)
    image = resolve_image(config, profile, engine)
    agent_path, agent_mount = _candidate_mount(config)
    inner = ["python", "-m", "fastkernels", *inner_overrides(overrides, profile.name, agent_path)]
    mounts = [[str(Path(run_dir).resolve()), CONTAINER_OUT, "rw"]]
    if config.runner.mount_source:
        mounts.append([str(PROJECT_ROOT.resolve()), CONTAINER_PROJECT, "ro"])
    if agent_mount is not None:
        mounts.append(agent_mount)
    gpu = host_gpu_id(0) if profile.kind == "cuda" else None
    env = {name: environ[name] for name in PASSED_ENV if environ.get(name)}
    env["PYTHONUNBUFFERED"] = "1"
    env["FASTKERNELS_CONTAINER_IMAGE"] = image
    from fastkernels.environment import git_state

    commit = git_state(PROJECT_ROOT).get("git_commit")
    if commit:
        env["FASTKERNELS_GIT_COMMIT"] = commit
    if engine in ("docker", "podman"):
        command = [executable, "run", "--rm", "--init"]
        if gpu is not None:
            command += ["--gpus", f"device={gpu}"] if engine == "docker" else ["--device", f"nvidia.com/gpu={gpu}"]
        if engine == "podman" and hasattr(os, "getuid") and os.getuid() != 0:
            # rootless: the container's user is the host user, so the run directory stays the caller's
            command += ["--userns=keep-id", "-e", "HOME=/tmp"]
        elif hasattr(os, "getuid"):
            command += ["--user", f"{os.getuid()}:{os.getgid()}", "-e", "HOME=/tmp"]
        if config.runner.network:
            command += ["--network", config.runner.network]
        for name, value in env.items():
            command += ["-e", f"{name}={value}"]
        for host, inside, mode in mounts:
            command += ["-v", f"{host}:{inside}" + (":ro" if mode == "ro" else "")]
        command += ["-w", CONTAINER_PROJECT, *config.runner.extra_args, image, *inner]
    else:
        command = [executable, "exec", "--cleanenv"]
        if gpu is not None:
            command += ["--nv"]
            env["CUDA_VISIBLE_DEVICES"] = gpu
        for name, value in env.items():
            command += ["--env", f"{name}={value}"]
        command += ["--bind", ",".join(f"{host}:{inside}:{mode}" for host, inside, mode in mounts)]
        command += ["--pwd", CONTAINER_PROJECT, *config.runner.extra_args, image, *inner]
    return ContainerPlan(engine=engine, executable=executable, image=image, profile=profile.name, gpu=gpu,
                         inner=inner, command=command, mounts=mounts)


def image_id(container: ContainerPlan) -> str | None:
    """The image's content id (docker/podman image inspect's Id; a SIF file's size and mtime), None when unreadable."""
    if container.engine in ("docker", "podman"):
        try:
            done = subprocess.run([container.executable, "image", "inspect", "--format", "{{.Id}}", container.image],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            detail = " ".join((done.stderr or done.stdout).split())[:200]
            build = f"scripts/build-images.sh {container.image.rpartition(':')[2]}"
            if container.engine != "docker":
                build += f" --engine {container.engine}"
            raise ContainerError(f"runner=container: {container.engine} has no image {container.image} ({detail}); "
                                 f"build it with {build}")
        return done.stdout.strip() or None
    path = Path(container.image)
    if path.is_file():
        stat = path.stat()
        return f"sif:{path.name}:{stat.st_size}:{int(stat.st_mtime)}"
    return None


def _run(command: list[str]) -> int:
    """Run the engine in the foreground; a signal or Ctrl-C on the host stops it (docker and podman proxy it)."""
    process = subprocess.Popen(command)
    try:
        return process.wait()
    except BaseException:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise


def _annotate_env(run_dir: Path, record: dict[str, Any]) -> None:
    """Add the host side (engine, image, host clock policy, and the Slurm job when the host process is one: the
    container does not see Slurm's variables) to the env.json the container wrote."""
    path = run_dir / "env.json"
    try:
        environment = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    environment["container"] = {key: record[key] for key in ("engine", "image", "image_id", "command", "returncode")}
    environment["host_clock_policy"] = record["host_clock_policy"]
    from fastkernels.environment import scheduler_state

    environment["scheduler"] = environment.get("scheduler") or scheduler_state()
    try:
        write_json(path, environment)
    except OSError as error:
        log.warning("runner=container: could not add the host record to %s (%s)", path, error)


def run_in_container(config: RunConfig, run_dir: Path, overrides: Sequence[str],
                     profile: HardwareProfile | None = None) -> ContainerPlan:
    """Run `config` inside its image; raise ContainerError (one line) when the engine fails or exits non-zero."""
    from fastkernels.clock_policy import apply_clock_policy

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    profile = profile if profile is not None else resolve_host_profile(config)
    container = plan(config, run_dir, list(overrides), profile)
    log.info("runner=container: %s", container.shell())
    if config.runner.dry_run:
        print(container.shell())
        return container
    identity = image_id(container)
    record: dict[str, Any] = {**asdict(container), "image_id": identity, "returncode": None,
                              "host_clock_policy": None, "started": time.time()}
    returncode: int | None = None
    try:
        with apply_clock_policy(config.clocks.policy, profile, 0) as clocks:
            record["host_clock_policy"] = clocks.summary()
            returncode = _run(container.command)
        record["host_clock_policy"] = clocks.summary()  # now with restored_by
    finally:
        record["returncode"] = returncode
        record["wall_s"] = round(time.time() - record.pop("started"), 3)
        write_json(run_dir / "container.json", record)
        if returncode is not None:
            _annotate_env(run_dir, record)
    if returncode != 0:
        raise ContainerError(f"runner=container: {container.engine} exited with status {returncode} "
                             f"(image {container.image}); see {run_dir / 'cli.log'} and {run_dir / 'container.json'}")
    return container

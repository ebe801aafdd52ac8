"""The pinned environment around a run: env.json's lock record, the container definitions, the Nix flake and the
operator scripts. No Docker engine, Apptainer, Nix store or GPU is needed: engines are fakes that log their argv,
and the flake is parsed (and evaluated against a stub nixpkgs) with nix-instantiate where that is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fastkernels.config import HardwareProfile
from fastkernels.environment import HARNESS_PATHS, fingerprint, harness_digest
from fastkernels.hardware import DeviceInfo

ROOT = Path(__file__).resolve().parent.parent
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}\b")
PROFILES = {path.stem: yaml.safe_load(path.read_text()) for path in (ROOT / "conf" / "hardware").glob("*.yaml")
            if path.stem != "auto"}
NIX = shutil.which("nix-instantiate")
NO_NIX = "nix-instantiate is not installed (Debian: apt-get install nix-bin); CI does not install it"


def test_env_json_records_the_lock_file_its_hash_and_the_drift(monkeypatch):
    monkeypatch.delenv("FASTKERNELS_LOCK_FILE", raising=False)
    device = DeviceInfo(kind="cpu", name="test cpu")
    environment = fingerprint(device, HardwareProfile(name="cpu", kind="cpu"), ROOT)
    assert environment["lock_file"] == "requirements/cpu.lock" and len(environment["lock_sha256"]) == 64
    assert isinstance(environment["lock_drift"], dict)
    json.dumps(environment)


def test_env_json_names_the_code_that_made_its_rows_by_content(tmp_path):
    # a copy of the harness paths, as a lent machine's copy of the tree holds them, whatever its git metadata says
    for top in HARNESS_PATHS:
        source = ROOT / top
        if source.is_dir():
            shutil.copytree(source, tmp_path / top, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (tmp_path / top).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tmp_path / top)
    copied = harness_digest(tmp_path)
    assert copied == harness_digest(ROOT)  # compiled Python and caches left out
    assert fingerprint(DeviceInfo(kind="cpu", name="test cpu"), HardwareProfile(name="cpu", kind="cpu"),
                       ROOT)["harness_sha256"] == copied["harness_sha256"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("docs do not make rows")
    assert harness_digest(tmp_path) == copied
    task = next((tmp_path / "tasks").rglob("task.yaml"))
    task.write_text(task.read_text() + "\n")
    assert harness_digest(tmp_path)["harness_sha256"] != copied["harness_sha256"]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_each_profiles_image_has_a_dockerfile_pinned_by_digest_installing_its_lock(profile):
    image = PROFILES[profile]["container_image"]
    line = image.rpartition(":")[2]
    dockerfile = (ROOT / "containers" / f"Dockerfile.{line}").read_text()
    base = re.search(r"^ARG BASE=(\S+)$", dockerfile, re.M).group(1)
    assert DIGEST.search(base) and re.search(r"^FROM \$\{BASE\}$", dockerfile, re.M)
    lock = "cpu.lock" if line == "cpu" else f"gpu-{line}.lock"
    assert (ROOT / "requirements" / lock).is_file() and f"COPY requirements/{lock} " in dockerfile
    assert "pip install --require-hashes -r" in dockerfile and "--no-deps --no-build-isolation -e /opt/fastkernels" in dockerfile
    users = re.findall(r"^USER (\S+)$", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0")
    if PROFILES[profile]["kind"] == "cuda":
        assert f"cuda:{PROFILES[profile]['cuda_version']}" in base


def test_the_apptainer_definition_uses_the_dockerfiles_base_and_lock():
    definition = (ROOT / "containers" / "fastkernels.def").read_text()
    assert re.search(r"^Bootstrap: docker$", definition, re.M) and "From: {{ BASE }}" in definition
    cu128 = re.search(r"^ARG BASE=(\S+)$", (ROOT / "containers" / "Dockerfile.cu128").read_text(), re.M).group(1)
    assert f"BASE={cu128}" in definition and "--require-hashes -r /opt/fastkernels/requirements/{{ LINE }}.lock" in definition
    for section in ("%arguments", "%files", "%post", "%environment", "%runscript", "%labels"):
        assert re.search(rf"^{section}$", definition, re.M), section
    copied = re.findall(r"^    (\S+) /opt/fastkernels/", definition, re.M)
    assert all((ROOT / path).exists() for path in copied) and "fastkernels" in copied


def test_the_docker_build_context_leaves_the_developers_environment_out():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "outputs", "multirun"} <= set(ignored)


def test_flake_lock_pins_the_revision_flake_nix_names():
    flake = (ROOT / "flake.nix").read_text()
    rev = re.search(r'inputs\.nixpkgs\.url = "github:NixOS/nixpkgs/([0-9a-f]{40})";', flake).group(1)
    locked = json.loads((ROOT / "flake.lock").read_text())["nodes"]["nixpkgs"]["locked"]
    assert locked["rev"] == rev and locked["narHash"].startswith("sha256-")


@pytest.mark.skipif(NIX is None, reason=NO_NIX)
def test_flake_nix_parses():
    done = subprocess.run([NIX, "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _evaluate(expression: str) -> object:
    done = subprocess.run([NIX, "--eval", "--strict", "--json", "-E", expression], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


FLAKE = f"""
  let
    flake = import {ROOT}/flake.nix;
    self = {{ outPath = "{ROOT}"; rev = "0123456789abcdef0123456789abcdef01234567"; }} // outputs;
    outputs = flake.outputs {{ inherit self; nixpkgs = {ROOT}/tests/nix/stub-nixpkgs; }};
    x = "x86_64-linux";
  in
"""


@pytest.mark.skipif(NIX is None, reason=NO_NIX)
def test_flake_outputs_evaluate_against_a_stub_nixpkgs():
    """`nix run . -- hardware=h100 tasks=level1` runs the default app: the locked CUDA 12.8 venv on this source."""
    found = _evaluate(FLAKE + """{
      apps = builtins.mapAttrs (name: app: app.type) outputs.apps.${x};
      shells = builtins.attrNames outputs.devShells.${x};
      checks = builtins.attrNames outputs.checks.${x};
      run = outputs.packages.${x}.default.text;
      cpu = outputs.packages.${x}.cpu.text;
      venv = outputs.packages.${x}.venv-gpu-cu128.text;
      hook = outputs.devShells.${x}.default.shellHook;
    }""")
    assert found["apps"] == {"default": "app", "cpu": "app"} and found["shells"] == ["cpu", "default"]
    assert found["checks"] == ["lockfiles", "pure-tests"]
    run = found["run"]
    assert run.rstrip().endswith('exec "$venv/bin/python" -m fastkernels "$@"') and "CUDA_HOME=" in run
    assert f"FASTKERNELS_LOCK_FILE={ROOT}/requirements/gpu-cu128.lock" in run
    assert "FASTKERNELS_GIT_COMMIT=0123456789abcdef0123456789abcdef01234567" in run
    assert "CUDA_HOME" not in found["cpu"] and "requirements/cpu.lock" in found["cpu"]
    assert f"lock={ROOT}/requirements/gpu-cu128.lock" in found["venv"] and "--require-hashes" in found["venv"]
    assert "source \"$venv/bin/activate\"" in found["hook"]
    for text in (run, found["venv"], found["hook"]):
        check = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


@pytest.mark.skipif(NIX is None, reason=NO_NIX)
def test_the_flakes_lockfiles_check_passes_on_this_tree(tmp_path):
    script = _evaluate(FLAKE + "outputs.checks.${x}.lockfiles.script")
    env = {**os.environ, "out": str(tmp_path / "out"), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e"], input=script, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gpu-cu128.lock" in done.stdout and (tmp_path / "out").exists()


def test_operator_scripts_are_valid_bash():
    for script in sorted((ROOT / "scripts").glob("*.sh")):
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"


@pytest.fixture
def fake_engines(tmp_path, monkeypatch):
    """`docker`, `podman` and `apptainer` that log their arguments; docker answers `info` unless FAKE_DOCKER_DOWN is
    set."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    (bin_dir / "docker").write_text(f"""#!/usr/bin/env bash
echo "docker $*" >> {log}
[[ "$1" == info && -n "${{FAKE_DOCKER_DOWN:-}}" ]] && {{ echo "Cannot connect to the Docker daemon" >&2; exit 1; }}
[[ "$1 $2" == "image inspect" && "$4" == "{{{{.Size}}}}" ]] && echo 3221225472
[[ "$1 $2" == "image inspect" && "$4" == "{{{{.Id}}}}" ]] && echo sha256:feed
exit 0
""")
    (bin_dir / "apptainer").write_text(f"""#!/usr/bin/env bash
echo "apptainer $*" >> {log}
[[ "$1" == build ]] && echo SIF > "${{@: -2:1}}"
exit 0
""")
    (bin_dir / "podman").write_text((bin_dir / "docker").read_text().replace('echo "docker $*"', 'echo "podman $*"'))
    for name in ("docker", "podman", "apptainer"):
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FASTKERNELS_GIT_COMMIT", "abc123")
    return lambda: log.read_text().splitlines() if log.exists() else []


def build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "build-images.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def test_build_images_builds_each_line_with_docker_and_reports_its_size(fake_engines):
    done = build("all")
    assert done.returncode == 0, done.stderr
    builds = [call for call in fake_engines() if call.startswith("docker build")]
    assert builds == [f"docker build -f containers/Dockerfile.{line} -t fastkernels:{line} "
                      "--build-arg FASTKERNELS_GIT_COMMIT=abc123 ." for line in ("cu128", "cpu")]
    assert "fastkernels:cu128: 3072 MiB (sha256:feed)" in done.stdout


def test_build_images_says_when_no_docker_engine_answers(fake_engines, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_DOWN", "1")
    done = build("cpu")
    assert done.returncode == 1 and "no Docker engine answers" in done.stderr
    assert not [call for call in fake_engines() if call.startswith("docker build")]


def test_build_images_builds_sif_files_with_apptainer(fake_engines, tmp_path):
    done = build("cpu", "--engine", "apptainer")
    sif = ROOT / "containers" / "fastkernels_cpu.sif"
    try:
        assert done.returncode == 0, done.stderr
        call = [c for c in fake_engines() if c.startswith("apptainer build")][0]
        assert "--build-arg LINE=cpu" in call and "--build-arg APT_PACKAGES=g++" in call
        assert call.endswith("containers/fastkernels_cpu.sif containers/fastkernels.def")
        assert re.search(r"--build-arg BASE=python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", call)
    finally:
        sif.unlink(missing_ok=True)


def test_build_images_with_podman_on_a_stand_in_base_from_a_local_wheelhouse(fake_engines, tmp_path):
    """Where no registry is reachable: another base (the Debian stand-in) and the lock's wheels from a directory,
    mounted for the build only, with pip told to use no index."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    done = build("cpu", "--engine", "podman", "--base", "localhost/debian-python:3.11-bookworm", "--wheels", str(wheels))
    assert done.returncode == 0, done.stderr
    call = [c for c in fake_engines() if c.startswith("podman build")][0]
    assert call.startswith("podman build -f containers/Dockerfile.cpu -t fastkernels:cpu "
                           "--build-arg FASTKERNELS_GIT_COMMIT=abc123 --build-arg BASE=localhost/debian-python:3.11-bookworm")
    assert f"-v {wheels}:/wheels:ro" in call and ":/etc/pip.conf:ro ." in call
    assert "fastkernels:cpu: 3072 MiB (sha256:feed)" in done.stdout


def test_a_wheelhouse_needs_podman(fake_engines, tmp_path):
    done = build("cpu", "--wheels", str(tmp_path))
    assert done.returncode == 2 and "--wheels needs --engine podman" in done.stderr


def test_build_and_pack_scripts_refuse_unknown_lines():
    assert build("cu999").returncode == 2
    done = subprocess.run(["bash", str(ROOT / "scripts" / "pack-wheels.sh"), "gpu-cu999", "/nonexistent"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "gpu-cu128" in done.stderr

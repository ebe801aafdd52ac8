"""The image definitions (containers/) as their builders read them: no container engine runs in CI, so the files
are parsed with dockerfile-parse (Dockerfile instructions, ARG defaults substituted) and spython (Apptainer sections)
and held to what issue #5 asks of them: bases pinned by digest, the hash-checked lock installed and nothing
resolved at build time, a non-root user, one image per line a hardware profile names."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import yaml
from dockerfile_parse import DockerfileParser
from spython.main.parse.parsers import SingularityParser

ROOT = Path(__file__).resolve().parent.parent
CONTAINERS = ROOT / "containers"
DOCKERFILES = sorted(CONTAINERS.glob("Dockerfile.*"))
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _parsed(path: Path) -> DockerfileParser:
    return DockerfileParser(fileobj=io.BytesIO(path.read_bytes()))  # the parser re-reads its file object


def _instructions(parser: DockerfileParser, name: str) -> list[str]:
    return [item["value"] for item in parser.structure if item["instruction"] == name]


def test_every_image_a_hardware_profile_names_has_a_dockerfile():
    for profile in (ROOT / "conf" / "hardware").glob("*.yaml"):
        image = yaml.safe_load(profile.read_text()).get("container_image")
        if image:
            assert (CONTAINERS / f"Dockerfile.{image.split(':')[1]}").is_file(), (profile.name, image)


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda path: path.name)
def test_a_dockerfile_builds_on_a_digest_pinned_base_from_the_hash_checked_lock_as_a_non_root_user(path):
    parser = _parsed(path)
    assert DIGEST.search(parser.baseimage), parser.baseimage  # ARG BASE's default, substituted into FROM
    lock = parser.envs["FASTKERNELS_LOCK_FILE"].removeprefix("/opt/fastkernels/")
    assert (ROOT / lock).is_file()
    assert any(value.startswith(f"{lock} ") for value in _instructions(parser, "COPY"))  # the lock its RUN installs
    runs = _instructions(parser, "RUN")
    assert any(f"--require-hashes -r /tmp/{Path(lock).name}" in run for run in runs)
    project_installs = [run for run in runs if "-e /opt/fastkernels" in run]
    assert project_installs and all("--no-deps" in run for run in project_installs)  # nothing resolved at build
    assert _instructions(parser, "USER")[-1] not in ("root", "0")


def test_the_apptainer_definition_matches_the_cuda_dockerfile():
    text = (CONTAINERS / "fastkernels.def").read_text()
    recipe = SingularityParser(str(CONTAINERS / "fastkernels.def")).recipe["spython-base"]
    arguments = dict(re.findall(r"^\s+(\w+)=(.*)$", text.split("%arguments", 1)[1].split("%", 1)[0], flags=re.M))
    assert arguments["BASE"] == _parsed(CONTAINERS / "Dockerfile.cu128").baseimage  # the same pinned base
    assert (ROOT / "requirements" / f"{arguments['LINE']}.lock").is_file()
    assert any("--require-hashes -r /opt/fastkernels/requirements/{{ LINE }}.lock" in line for line in recipe.install)
    assert any("--no-deps" in line and "-e /opt/fastkernels" in line for line in recipe.install)
    copied = {line.split()[0] for line in recipe.files}
    assert {"pyproject.toml", "fastkernels", "conf", "tasks", "requirements"} <= copied
    assert "FASTKERNELS_LOCK_FILE=/opt/fastkernels/requirements/{{ LINE }}.lock" in recipe.environ


def test_the_build_context_leaves_the_developers_environment_out():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".whl", "outputs", "multirun"} <= ignored

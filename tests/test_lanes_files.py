"""scripts/lanes/: the committed lanes files of the next device plan (a fresh checkout has no .lanes/). Every line is
one scripts/device-lanes.sh accepts, every task a lanes file names exists, and the two L2/L3 halves together name
every level-2 and level-3 task exactly once, so a task added later is not left out of the pass."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from fastkernels.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
LANES = sorted((ROOT / "scripts/lanes").glob("*.txt"))
REGISTRY = Registry()


def runs(path: Path) -> list[list[str]]:
    """Each run of a lanes file as its shell words (comments and blank lines left out)."""
    return [shlex.split(line) for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def included_tasks(path: Path) -> list[str]:
    """The task names every run's FK_TASKS includes, in order."""
    names = []
    for words in runs(path):
        for word in words[2:]:
            match = re.search(r"tasks\.include=\[([^\]]*)\]", word) if word.startswith("FK_TASKS=") else None
            names += match.group(1).split(",") if match else []
    return names


def test_there_are_lanes_files():
    assert {p.name for p in LANES} >= {"h200-l1-changed.txt", "l2l3-1.txt", "l2l3-2.txt", "reference.txt"}


def lanes_check(tmp_path: Path, path: Path) -> subprocess.CompletedProcess:
    """device-lanes.sh over `path` in a copy of scripts/ whose device-session.sh has the real step labels and does
    nothing: the script checks every line before it runs any."""
    fake = tmp_path / "scripts"
    fake.mkdir()
    real = (ROOT / "scripts/device-session.sh").read_text()
    labels = re.findall(r"^    ([a-z|-]+)\)", real, flags=re.M)
    (fake / "device-session.sh").write_text("case x in\n" + "".join(f"    {label}) ;;\n" for label in labels)
                                            + "esac\n")
    (fake / "device-lanes.sh").write_text((ROOT / "scripts/device-lanes.sh").read_text())
    env = {**os.environ, "FK_CALL_BUDGET": "1", "OUT": str(tmp_path / "out"), "FK_WHEELS": "none"}
    return subprocess.run(["bash", "scripts/device-lanes.sh", str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("path", LANES, ids=lambda p: p.name)
def test_device_lanes_accepts_every_line(tmp_path, path):
    result = lanes_check(tmp_path, path)
    assert "device-lanes.sh:" not in result.stderr, result.stderr


def test_the_check_refuses_an_unknown_step(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text('0 nooop FK_TASKS="tasks=all"\n')
    result = lanes_check(tmp_path, bad)
    assert result.returncode == 2 and "unknown step 'nooop'" in result.stderr


@pytest.mark.parametrize("path", LANES, ids=lambda p: p.name)
def test_every_task_named_exists(path):
    unknown = [name for name in included_tasks(path) if name not in REGISTRY.names]
    assert not unknown, f"{path.name} names tasks that do not exist: {unknown}"


def test_the_l2_l3_halves_name_every_l2_and_l3_task_once():
    named = included_tasks(ROOT / "scripts/lanes/l2l3-1.txt") + included_tasks(ROOT / "scripts/lanes/l2l3-2.txt")
    expected = sorted(name for name in REGISTRY.names if REGISTRY.get(name).level in (2, 3))
    assert sorted(named) == expected


def test_the_changed_l1_file_names_level_1_tasks_only():
    assert all(REGISTRY.get(name).level == 1 for name in included_tasks(ROOT / "scripts/lanes/h200-l1-changed.txt"))

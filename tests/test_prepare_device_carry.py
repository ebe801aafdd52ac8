"""scripts/prepare-device-carry.sh --picks-only: a fresh checkout's .picks/ gets, for each hardware under
docs/results/, the tuning picks committed last (several sessions' folders share a date, so the commit decides)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def committed_at(path: Path) -> int:
    out = subprocess.run(["git", "log", "-1", "--format=%ct", "--", str(path.relative_to(ROOT))], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    return int(out) if out else 0


def test_each_hardware_gets_its_last_committed_picks(tmp_path):
    result = subprocess.run(["bash", "scripts/prepare-device-carry.sh", "--picks-only"], cwd=ROOT,
                            env={**os.environ, "FK_PICKS_DIR": str(tmp_path)}, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    by_hardware: dict[str, list[Path]] = {}
    for picks in (ROOT / "docs/results").glob("h*-*/picks.tgz"):
        by_hardware.setdefault(picks.parent.name.split("-")[0], []).append(picks)
    assert {"h100", "h200"} <= set(by_hardware)
    for hardware, candidates in by_hardware.items():
        last = max(candidates, key=committed_at)
        assert (tmp_path / f"{hardware}.tgz").read_bytes() == last.read_bytes(), hardware
        assert f"{hardware}.tgz = docs/results/{last.parent.name}/picks.tgz" in result.stdout

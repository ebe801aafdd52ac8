"""scripts/pack-out.sh: whatever a device call left under $OUT comes back as one archive (the device tool returns at
most 8 files, 2 folders down), the rebuildable CUDA extensions left out unless asked for, and the merged tuning picks
beside it rather than in it."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pack(out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts/pack-out.sh")], env={**os.environ, "OUT": str(out), **env},
                          capture_output=True, text=True)


def a_call_s_outputs(out: Path) -> None:
    for name in ("moe/chain.log", "moe/mem/samples.txt", "moe/moe/lanes.tgz", "gpu/gpu-tests.log",
                 "blocks/ext/causal_conv1d_cuda.so", "blocks/picks.tgz"):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(name)


def members(archive: Path) -> set[str]:
    with tarfile.open(archive) as tar:
        return {member.name.removeprefix("./") for member in tar.getmembers() if member.isfile()}


def test_everything_but_the_extensions_comes_back_as_one_file_and_the_picks_beside_it(tmp_path):
    a_call_s_outputs(tmp_path)
    done = pack(tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tgz", "picks.tgz"]
    assert members(tmp_path / "out.tgz") == {"moe/chain.log", "moe/mem/samples.txt", "moe/moe/lanes.tgz",
                                             "gpu/gpu-tests.log"}
    assert (tmp_path / "picks.tgz").read_text() == "blocks/picks.tgz"
    assert "4 files" in done.stdout and "tuning picks of ./blocks/picks.tgz" in done.stdout


def test_the_picks_nearest_out_come_back_and_deeper_ones_are_left_out(tmp_path):
    for name in ("run/picks.tgz", "run/call-1/picks.tgz", "run/call-1/rows.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert pack(tmp_path).returncode == 0
    assert (tmp_path / "picks.tgz").read_text() == "run/picks.tgz"
    assert members(tmp_path / "out.tgz") == {"run/call-1/rows.txt"}


def test_a_call_without_picks_brings_back_the_archive_alone(tmp_path):
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "card.txt").write_text("H200")
    assert pack(tmp_path).returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["out.tgz"]


def test_the_extensions_come_too_when_asked(tmp_path):
    a_call_s_outputs(tmp_path)
    assert pack(tmp_path, FK_PACK_EXT="1").returncode == 0
    assert "blocks/ext/causal_conv1d_cuda.so" in members(tmp_path / "out.tgz")


def test_an_archive_already_there_is_not_overwritten(tmp_path):
    (tmp_path / "out.tgz").write_text("earlier")
    done = pack(tmp_path)
    assert done.returncode == 2 and "exists already" in done.stderr
    assert (tmp_path / "out.tgz").read_text() == "earlier"

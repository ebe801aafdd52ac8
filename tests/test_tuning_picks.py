"""scripts/tuning_picks.py carries autotuning picks (Triton's *.autotune.json, Inductor's *.best_config and its
select-algorithm timings) from one bare GPU machine to the next, and nothing else."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import tuning_picks  # noqa: E402


def _caches(base: Path) -> dict[str, Path]:
    roots = {"triton": base / "triton", "inductor": base / "inductor"}
    (roots["triton"] / "ab12").mkdir(parents=True)
    (roots["triton"] / "ab12" / "chunk_fwd_kernel.autotune.json").write_text('{"configs_timings": []}')
    (roots["triton"] / "ab12" / "chunk_fwd_kernel.cubin").write_bytes(b"\0kernel")
    (roots["inductor"] / "xy").mkdir(parents=True)
    (roots["inductor"] / "xy" / "cxyz.best_config").write_text('{"XBLOCK": 128, "found_by_coordesc": true}')
    (roots["inductor"] / "xy" / "cxyz.py").write_text("# generated kernel")
    (roots["inductor"] / "cache").mkdir()
    (roots["inductor"] / "cache" / "f00d").write_text('{"system": {}, "cache": {}}')
    (roots["inductor"] / "fxgraph").mkdir()
    (roots["inductor"] / "fxgraph" / "entry").write_bytes(b"graph")
    return roots


def test_collect_keeps_only_the_picks_and_restore_puts_them_back_at_the_same_paths(tmp_path):
    roots = _caches(tmp_path / "old")
    found, kept = tuning_picks.collect(tmp_path / "picks.tgz", roots)
    assert (found, kept) == (3, 0)
    with tarfile.open(tmp_path / "picks.tgz") as tar:
        assert sorted(tar.getnames()) == ["inductor/cache/f00d", "inductor/xy/cxyz.best_config",
                                          "triton/ab12/chunk_fwd_kernel.autotune.json"]
    fresh = {"triton": tmp_path / "new" / "triton", "inductor": tmp_path / "new" / "inductor"}
    assert tuning_picks.restore(tmp_path / "picks.tgz", fresh) == (3, 0)
    assert (fresh["inductor"] / "xy" / "cxyz.best_config").read_text() == '{"XBLOCK": 128, "found_by_coordesc": true}'
    assert not (fresh["triton"] / "ab12" / "chunk_fwd_kernel.cubin").exists()  # kernels are rebuilt, not carried


def test_restore_leaves_a_pick_the_machine_already_has(tmp_path):
    roots = _caches(tmp_path / "old")
    tuning_picks.collect(tmp_path / "picks.tgz", roots)
    (roots["inductor"] / "xy" / "cxyz.best_config").write_text('{"XBLOCK": 64}')  # tuned here since
    assert tuning_picks.restore(tmp_path / "picks.tgz", roots) == (0, 3)
    assert (roots["inductor"] / "xy" / "cxyz.best_config").read_text() == '{"XBLOCK": 64}'


def test_collect_with_merge_keeps_an_earlier_sessions_picks_this_machine_never_needed(tmp_path):
    tuning_picks.collect(tmp_path / "earlier.tgz", _caches(tmp_path / "earlier"))
    today = {"triton": tmp_path / "today" / "triton", "inductor": tmp_path / "today" / "inductor"}
    (today["triton"] / "cd34").mkdir(parents=True)
    (today["triton"] / "cd34" / "swiglu_kernel.autotune.json").write_text("{}")
    found, kept = tuning_picks.collect(tmp_path / "picks.tgz", today, merge=tmp_path / "earlier.tgz")
    assert (found, kept) == (1, 3)
    assert len(tuning_picks.read_archive(tmp_path / "picks.tgz")) == 4


def test_an_archive_member_outside_the_two_caches_is_refused(tmp_path):
    archive = tmp_path / "evil.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("triton/../../outside")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ValueError, match="evil.tgz: member 'triton/../../outside' is not a pick"):
        tuning_picks.read_archive(archive)
    done = subprocess.run([sys.executable, "scripts/tuning_picks.py", "restore", str(archive), "--triton",
                           str(tmp_path / "t"), "--inductor", str(tmp_path / "i")], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 1 and "is not a pick under triton/ or inductor/" in done.stderr
    assert not (tmp_path / "outside").exists()

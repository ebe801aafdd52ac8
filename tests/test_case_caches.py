"""Per-case compile caches (fastkernels/case_caches.py, harness.compile_caches=per_case): each case's baselines compile
in a fresh Inductor/Triton cache directory seeded from the run's trusted tuning picks, so nothing a candidate writes
into a cache (a slow pick or kernel under its baseline's cache key) reaches a baseline, in that task or any other."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from fastkernels.case_caches import PicksChanged, TrustedPicks, case_compile_caches
from fastkernels.integrity import Integrity
from fastkernels.records import Status
from fastkernels.tuning_picks import collect
from scoring import score

EXPLOITS = Path(__file__).parent / "exploits"


def _archive(tmp_path: Path) -> tuple[Path, str]:
    cache = tmp_path / "trusted-inductor" / "ab"
    cache.mkdir(parents=True)
    (cache / "kernel.best_config").write_text('{"XBLOCK": 1024, "num_warps": 8}')
    archive = tmp_path / "picks.tgz"
    collect(archive, {"triton": tmp_path / "trusted-triton", "inductor": tmp_path / "trusted-inductor"})
    return archive, f"{hashlib.sha256(archive.read_bytes()).hexdigest()[:16]} {archive}"


def test_each_case_gets_a_fresh_directory_seeded_with_the_picks_and_removed_after(tmp_path, monkeypatch):
    archive, value = _archive(tmp_path)
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", value)
    picks = TrustedPicks.from_environment()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "shared"))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    seen = []
    for _ in range(2):
        with case_compile_caches(tmp_path / "cases", picks, None) as roots:
            assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(roots["inductor"])
            assert os.environ["TRITON_CACHE_DIR"] == str(roots["triton"])
            assert (roots["inductor"] / "ab" / "kernel.best_config").is_file()
            seen.append(roots["inductor"].parent)
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "shared")
        assert "TRITON_CACHE_DIR" not in os.environ
    assert seen[0] != seen[1] and not any(path.exists() for path in seen)


def test_an_archive_that_is_not_the_runs_is_refused(tmp_path, monkeypatch):
    archive, value = _archive(tmp_path)
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", value)
    picks = TrustedPicks.from_environment()
    archive.write_bytes(archive.read_bytes() + b"planted")
    with pytest.raises(PicksChanged, match="is not the run's"):
        with case_compile_caches(tmp_path / "cases", picks, None):
            pass
    assert not any((tmp_path / "cases").iterdir())
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", str(archive))
    with pytest.raises(ValueError, match="expected 'SHA256-PREFIX PATH'"):
        TrustedPicks.from_environment()


def test_the_harness_setting_the_cache_variables_is_not_a_change_but_an_earlier_change_stays_reported(tmp_path,
                                                                                                       monkeypatch):
    snapshot = Integrity()
    with case_compile_caches(tmp_path / "cases", None, snapshot):
        assert snapshot.changed() == ""
    monkeypatch.setenv("TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT", "1")  # something else changed meanwhile
    with case_compile_caches(tmp_path / "cases", None, snapshot):
        assert "TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT=1" in snapshot.changed()


def test_what_a_candidate_plants_in_the_caches_never_reaches_a_later_cases_baselines(tmp_path, monkeypatch):
    archive, value = _archive(tmp_path)
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", value)
    monkeypatch.setenv("FK_TEST_PLANT_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "shared" / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "shared" / "triton"))
    rows = score(EXPLOITS / "plant_compile_cache", tmp_path)
    assert all(row.status is Status.PASSED for row in rows), [(row.status, row.reason) for row in rows]
    notes = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert len(notes) == len(rows) and len({note["caches"] for note in notes}) == len(rows)
    for note in notes:  # the candidate's first call in a case: only the trusted picks, nothing it planted before
        assert note["held"] == ["inductor/ab/kernel.best_config"], note
        assert not Path(note["caches"]).exists()
    assert (tmp_path / "shared" / "inductor" / "planted-import.best_config").is_file()  # where its import looked


def test_shared_caches_carry_a_plant_into_the_next_case(tmp_path, monkeypatch):
    # why per_case is the default: under harness.compile_caches=shared (for trusted code) the plant stays
    monkeypatch.setenv("FK_TEST_PLANT_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "shared" / "inductor"))
    rows = score(EXPLOITS / "plant_compile_cache", tmp_path, "rms_norm", "harness.compile_caches=shared")
    notes = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and len(notes) == 1  # one directory for every case
    assert "inductor/planted-import.best_config" in notes[0]["held"]


def test_a_candidate_that_rewrites_the_runs_tuning_picks_is_a_reward_hack(tmp_path, monkeypatch):
    archive, value = _archive(tmp_path)
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", value)
    rows = score(EXPLOITS / "tamper_tuning_picks", tmp_path)
    assert all(row.status is Status.REWARD_HACK and "changed after the candidate's import" in row.reason
               for row in rows), [(row.status, row.reason) for row in rows]


def test_an_archive_changed_before_the_worker_started_is_the_runs_fault_not_the_candidates(tmp_path, monkeypatch):
    archive, value = _archive(tmp_path)
    archive.write_bytes(archive.read_bytes() + b"changed")
    monkeypatch.setenv("FASTKERNELS_TUNING_PICKS", value)
    rows = score(EXPLOITS / "honest", tmp_path)
    assert all(row.status is Status.BASELINE_ERROR and "is not the run's" in row.reason for row in rows), [
        (row.status, row.reason) for row in rows]

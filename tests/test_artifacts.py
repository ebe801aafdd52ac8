"""Artifacts are written atomically: a crash mid-write leaves the old file intact and no temporary behind."""

from __future__ import annotations

import json

import pytest

from fastkernels.artifacts import write_atomic, write_json


def test_write_replaces_the_whole_file(tmp_path):
    target = tmp_path / "out" / "results.jsonl"
    write_atomic(target, "first\n")
    write_atomic(target, "second\n")
    assert target.read_text() == "second\n" and list(target.parent.iterdir()) == [target]


def test_a_failed_write_keeps_the_old_file_and_cleans_up(tmp_path):
    target = tmp_path / "env.json"
    write_json(target, {"a": 1})

    class Exploding:
        def __str__(self) -> str:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_json(target, {"a": Exploding()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["env.json"]

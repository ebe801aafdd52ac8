"""Signed rows: the runner takes a line only when the worker wrote its MAC under the run's key; a torn last line
(a crash mid-write) is neither taken nor counted as forged."""

from __future__ import annotations

from fastkernels.row_signing import mac_path, new_key, sign, signed_lines


def test_only_lines_signed_with_the_key_are_taken_and_a_torn_last_line_is_neither(tmp_path):
    key, rows = new_key(), tmp_path / "task.rows.jsonl"
    rows.write_text('{"case": "a"}\n{"case": "forged"}\n{"case": "b"}\n{"case": "c"')  # "c" still being written
    mac_path(rows).write_text("".join(sign(key, line) + "\n" for line in ('{"case": "a"}', '{"case": "b"}')))
    assert signed_lines(rows, key) == (['{"case": "a"}', '{"case": "b"}'], 1)
    assert signed_lines(rows, new_key()) == ([], 3)  # another run's key signs nothing here
    assert mac_path(rows).name == "task.rows.mac"


def test_a_missing_rows_file_holds_nothing(tmp_path):
    assert signed_lines(tmp_path / "none.rows.jsonl", new_key()) == ([], 0)

"""scripts/carry_size.py counts what a device call carries: the tree git would copy (tracked and untracked files,
not ignored ones) and the ignored paths named in the carry, against the 64 MiB limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import carry_size  # noqa: E402


def _repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text(".whl/\n")
    (root / "tracked.txt").write_bytes(b"t" * 1000)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    (root / "untracked.txt").write_bytes(b"u" * 500)
    (root / ".whl").mkdir()
    (root / ".whl" / "big.whl").write_bytes(b"w" * 4000)
    return root


def test_the_tree_counts_tracked_and_untracked_files_and_ignored_ones_only_when_carried(tmp_path, capsys):
    root = _repo(tmp_path / "repo")
    gitignore = len((root / ".gitignore").read_bytes())
    assert sorted(path.name for path in carry_size.tree_files(root)) == [".gitignore", "tracked.txt", "untracked.txt"]
    assert carry_size.main(["--root", str(root)]) == 0
    assert f"{(1500 + gitignore) / 2**20:8.1f} MiB" in capsys.readouterr().out
    assert carry_size.main(["--root", str(root), ".whl", "missing"]) == 0
    out = capsys.readouterr().out
    assert "          .whl:      0.0 MiB" in out and "fits" in out
    assert carry_size.size_of(root / ".whl") == 4000 and carry_size.size_of(root / "missing") == 0


def test_a_carry_over_the_limit_exits_1_and_says_so(tmp_path, capsys, monkeypatch):
    root = _repo(tmp_path / "repo")
    monkeypatch.setattr(carry_size, "LIMIT_BYTES", 3000)
    assert carry_size.main(["--root", str(root)]) == 0
    assert carry_size.main(["--root", str(root), ".whl"]) == 1
    assert "OVER the limit" in capsys.readouterr().out.splitlines()[-1]

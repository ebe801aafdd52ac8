"""How much a device call would carry: the working tree the device tool copies (tracked files and untracked ones git
does not ignore) plus the ignored paths named in its carry, against the tool's 64 MiB limit.

Why: the thirty-fifth session's first call was refused (67.2 MB: 24 MB of tree, 43 MB of wheels); a refusal costs
no device time, but knowing the headroom before a session's calls tells what to archive or set aside first.
Usage: python scripts/carry_size.py [CARRY_PATH ...]   (e.g. .whl .picks .lanes; exit 1 when over the limit)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

LIMIT_BYTES = 64 * 2**20


def tree_files(root: Path) -> list[Path]:
    """The files the device tool copies from `root`: tracked, and untracked but not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.split(b"\0")
    return [root / name.decode() for name in listed if name and (root / name.decode()).is_file()]


def size_of(path: Path) -> int:
    """Bytes under `path` (a file or a directory, links not followed); 0 where it does not exist."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    if not path.is_dir():
        return 0
    return sum(item.lstat().st_size for item in path.rglob("*") if item.is_file() or item.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("carry", nargs="*", help="ignored paths the call names in its carry")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args(argv)
    tree = sum(size_of(path) for path in tree_files(args.root))
    parts = [("working tree", tree)] + [(name, size_of(args.root / name)) for name in args.carry]
    total = sum(size for _, size in parts)
    for name, size in parts:
        print(f"{name:>14}: {size / 2**20:8.1f} MiB")
    verdict = "fits" if total <= LIMIT_BYTES else "OVER the limit: archive or set aside before calling"
    print(f"{'total':>14}: {total / 2**20:8.1f} MiB of {LIMIT_BYTES / 2**20:.0f} MiB, "
          f"{(LIMIT_BYTES - total) / 2**20:+.1f} MiB to spare: {verdict}")
    return 0 if total <= LIMIT_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())

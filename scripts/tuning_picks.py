"""Carry autotuning picks from one GPU machine to the next: collect them from the Triton and Inductor caches into one
archive, and restore them into a fresh machine's caches before a run.

A pick is the launch configuration an autotuner chose for one kernel and input shape: Triton's `*.autotune.json`
(written under TRITON_CACHE_AUTOTUNING=1, which the harness sets), Inductor's `*.best_config` (max-autotune and
coordinate-descent tuning) and Inductor's select-algorithm timings under `cache/`. Each is keyed by the kernel's
source, the library versions and the device, so a pick restored on another machine of the same image and GPU is used
only where all of those match, and anything else is tuned afresh. What this buys: the lent machines start bare, and
autotuning was most of a cold pass's first-call time (2026-11-30: 1435 s of compile time over the 87 tasks, Liger's
MoE 313 s, FLA 336 s, Inductor 436 s); and a baseline's configuration stays the one an earlier session drew instead of
a new draw per machine (max-autotune's coordinate descent settles on different configurations from run to run).
Only the small pick files travel; compiled kernels are rebuilt from them.

Collect only from runs of trusted code (the noop or reference agent): a candidate's worker can write into the caches,
and a bad pick planted there for a baseline's kernel would slow that baseline in every run that restores it (the
residual attack surface of docs/progress.md; the container runner's read-only caches would close it).

Usage (scripts/device-session.sh calls both):
  python scripts/tuning_picks.py restore ARCHIVE --triton DIR --inductor DIR
  python scripts/tuning_picks.py collect ARCHIVE --triton DIR --inductor DIR [--merge OLD_ARCHIVE]
"""

from __future__ import annotations

import argparse
import io
import os
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

# (cache, pattern) of the files that hold picks: relative to the cache root, kept at the same relative path
PICK_PATTERNS = (("triton", "**/*.autotune.json"), ("inductor", "**/*.best_config"), ("inductor", "cache/*"))


def pick_files(roots: dict[str, Path]) -> dict[str, Path]:
    """Archive member name (`triton/...` or `inductor/...`) -> file, for every pick under the cache roots."""
    found: dict[str, Path] = {}
    for cache, pattern in PICK_PATTERNS:
        root = roots[cache]
        if not root.is_dir():
            continue
        for path in sorted(root.glob(pattern)):
            if path.is_file() and not path.is_symlink():
                found[f"{cache}/{path.relative_to(root).as_posix()}"] = path
    return found


def read_archive(archive: Path) -> dict[str, bytes]:
    """Member name -> bytes of an earlier archive; refuses members that would land outside their cache."""
    members: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            _check_name(archive, member.name)
            extracted = tar.extractfile(member)
            assert extracted is not None
            members[member.name] = extracted.read()
    return members


def _check_name(archive: Path, name: str) -> None:
    parts = PurePosixPath(name).parts
    if len(parts) < 2 or parts[0] not in ("triton", "inductor") or PurePosixPath(name).is_absolute() or ".." in parts:
        raise ValueError(f"{archive}: member {name!r} is not a pick under triton/ or inductor/")


def collect(archive: Path, roots: dict[str, Path], merge: Path | None = None) -> tuple[int, int]:
    """Write every pick in the caches (and, with `merge`, an earlier archive's others) to `archive` atomically.
    Returns (picks from the caches, picks kept from `merge` only)."""
    members = read_archive(merge) if merge is not None and merge.is_file() else {}
    files = pick_files(roots)
    members.update({name: path.read_bytes() for name, path in files.items()})
    archive.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=archive.parent, prefix=f".{archive.name}.")
    try:
        with os.fdopen(handle, "wb") as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
            for name in sorted(members):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(members[name]), 0o644
                tar.addfile(info, io.BytesIO(members[name]))
        os.replace(temporary, archive)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return len(files), len(set(members) - set(files))


def restore(archive: Path, roots: dict[str, Path]) -> tuple[int, int]:
    """Write the archive's picks into the caches, leaving any pick a cache already holds as it is.
    Returns (restored, already there)."""
    restored = kept = 0
    for name, data in read_archive(archive).items():
        cache, relative = name.split("/", 1)
        target = roots[cache] / relative
        if target.exists():
            kept += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        restored += 1
    return restored, kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("collect", "restore"))
    parser.add_argument("archive", type=Path)
    parser.add_argument("--triton", type=Path, required=True, help="TRITON_CACHE_DIR")
    parser.add_argument("--inductor", type=Path, required=True, help="TORCHINDUCTOR_CACHE_DIR")
    parser.add_argument("--merge", type=Path, help="collect: an earlier archive whose other picks are kept")
    args = parser.parse_args()
    roots = {"triton": args.triton, "inductor": args.inductor}
    try:
        if args.action == "collect":
            found, kept = collect(args.archive, roots, args.merge)
            print(f"tuning picks: {found} collected from the caches, {kept} kept from {args.merge} -> {args.archive}")
        else:
            if not args.archive.is_file():
                parser.error(f"{args.archive}: no such archive")
            restored, kept = restore(args.archive, roots)
            print(f"tuning picks: {restored} restored from {args.archive}, {kept} already in the caches")
    except (OSError, ValueError, tarfile.TarError) as error:
        parser.exit(1, f"tuning_picks.py {args.action}: {error}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Autotuning picks: the launch configuration an autotuner chose for one kernel and input shape, as files in the
Triton and Inductor caches (Triton's `*.autotune.json`, written under TRITON_CACHE_AUTOTUNING=1 by the autotuners
built while that was set: the worker fork server imports under the workers' value, launch.IMPORT_TIME_ENV, without
which Liger's preloaded MoE autotuners never wrote or read one until 2026-12-02; Inductor's `*.best_config` and its
select-algorithm timings under `cache/`), collected into one archive and restored from it.

scripts/tuning_picks.py carries them between machines (its docstring says why); with `harness.compile_caches=per_case`
each case's fresh compile caches are seeded from the run's archive (fastkernels/case_caches.py). Only the small pick
files travel; compiled kernels are rebuilt from them.
"""

from __future__ import annotations

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
    """Write the archive's picks into the caches, leaving any pick a cache already holds as it is; each whole or not
    at all (lanes sharing a GPU restore into one cache at once, scripts/device-lanes.sh). Returns (restored, already
    there)."""
    restored = kept = 0
    for name, data in read_archive(archive).items():
        cache, relative = name.split("/", 1)
        target = roots[cache] / relative
        if target.exists():
            kept += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)
        restored += 1
    return restored, kept

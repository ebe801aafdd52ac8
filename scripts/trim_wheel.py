"""Drops files a carried wheel never needs (by name suffix) and their RECORD lines, in place, so it still installs.

The device tool carries at most 64 MiB; SGLang's wheel is 39 MB, 44 MiB of it unpacked being its server's Rust
extensions, which importing its kernels never loads (scripts/pack-sglang.sh).
Usage: python scripts/trim_wheel.py WHEEL --drop-suffix .so [--drop-suffix ...]
"""

from __future__ import annotations

import argparse
import os
import zipfile
from pathlib import Path


def trim(wheel: Path, suffixes: tuple[str, ...]) -> tuple[int, int]:
    """Rewrites `wheel` without the members whose names end in one of `suffixes`; (files dropped, bytes dropped)."""
    trimmed = wheel.with_name(wheel.name + ".trimmed")
    files = size = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(trimmed, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.filename.endswith(suffixes):
                files, size = files + 1, size + item.file_size
                continue
            data = source.read(item.filename)
            if item.filename.endswith(".dist-info/RECORD"):
                kept = [line for line in data.decode().split("\n") if not line.split(",")[0].endswith(suffixes)]
                data = "\n".join(kept).encode()
            target.writestr(item, data)
    os.replace(trimmed, wheel)
    return files, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--drop-suffix", action="append", required=True, help="e.g. .so (repeatable)")
    args = parser.parse_args(argv)
    if not zipfile.is_zipfile(args.wheel):
        parser.error(f"{args.wheel}: no such wheel (not a zip file)")
    files, size = trim(args.wheel, tuple(args.drop_suffix))
    print(f"{args.wheel.name}: dropped {files} files ({size / 2**20:.1f} MiB unpacked),"
          f" {args.wheel.stat().st_size / 2**20:.1f} MiB left")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

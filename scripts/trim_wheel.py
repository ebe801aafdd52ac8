"""Drops files a carried wheel never needs (by name suffix or leading path) and their RECORD lines, in place, so it
still installs.

The device tool carries at most 64 MiB; SGLang's wheel is 39 MB, 44 MiB of it unpacked being its server's Rust
extensions, which importing its kernels never loads, and its diffusion server, model files and tests are never
imported by its kernels either (scripts/pack-sglang.sh).
Usage: python scripts/trim_wheel.py WHEEL [--drop-suffix .so ...] [--drop-prefix sglang/test/ ...]
"""

from __future__ import annotations

import argparse
import os
import zipfile
from pathlib import Path


def trim(wheel: Path, suffixes: tuple[str, ...], prefixes: tuple[str, ...] = ()) -> tuple[int, int]:
    """Rewrites `wheel` without the members whose names end in one of `suffixes` or start with one of `prefixes`;
    (files dropped, bytes dropped)."""
    def dropped(name: str) -> bool:
        return name.endswith(suffixes) or name.startswith(prefixes)

    trimmed = wheel.with_name(wheel.name + ".trimmed")
    files = size = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(trimmed, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if dropped(item.filename):
                files, size = files + 1, size + item.file_size
                continue
            data = source.read(item.filename)
            if item.filename.endswith(".dist-info/RECORD"):
                kept = [line for line in data.decode().split("\n") if not dropped(line.split(",")[0])]
                data = "\n".join(kept).encode()
            target.writestr(item, data)
    os.replace(trimmed, wheel)
    return files, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--drop-suffix", action="append", default=[], help="e.g. .so (repeatable)")
    parser.add_argument("--drop-prefix", action="append", default=[], help="e.g. sglang/test/ (repeatable)")
    args = parser.parse_args(argv)
    if not args.drop_suffix and not args.drop_prefix:
        parser.error("nothing to drop: give --drop-suffix or --drop-prefix")
    if not zipfile.is_zipfile(args.wheel):
        parser.error(f"{args.wheel}: no such wheel (not a zip file)")
    files, size = trim(args.wheel, tuple(args.drop_suffix), tuple(args.drop_prefix))
    print(f"{args.wheel.name}: dropped {files} files ({size / 2**20:.1f} MiB unpacked),"
          f" {args.wheel.stat().st_size / 2**20:.1f} MiB left")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Carry autotuning picks from one GPU machine to the next: collect them from the Triton and Inductor caches into one
archive, and restore them into a fresh machine's caches before a run.

A pick is the launch configuration an autotuner chose for one kernel and input shape: Triton's `*.autotune.json`
(written under TRITON_CACHE_AUTOTUNING=1, which the harness sets), Inductor's `*.best_config` (max-autotune and
coordinate-descent tuning) and Inductor's select-algorithm timings under `cache/`. Each is keyed by the kernel's
source, the library versions and the device, so a pick restored on another machine of the same image and GPU is used
only where all of those match, and anything else is tuned afresh. What this buys: the lent machines start bare, and
autotuning was most of a cold pass's first-call time (2026-11-30: 1435 s of compile time over the 87 tasks, Liger's
MoE 313 s, FLA 336 s, Inductor 436 s; Liger's picks carried only since 2026-12-02, fastkernels/launch.py); and a baseline's configuration stays the one an earlier session drew instead of
a new draw per machine (max-autotune's coordinate descent settles on different configurations from run to run).
Only the small pick files travel; compiled kernels are rebuilt from them.

Collect only from runs of trusted code (the noop or reference agent, which scripts/device-session.sh runs with
harness.compile_caches=shared): a candidate's worker can write into the caches it sees, and a bad pick planted for a
baseline's kernel would slow that baseline in every run that restores it. An agent's run keeps the default per-case
caches (fastkernels/case_caches.py), seeded from the archive and removed after each case.

Usage (scripts/device-session.sh calls both):
  python scripts/tuning_picks.py restore ARCHIVE --triton DIR --inductor DIR
  python scripts/tuning_picks.py collect ARCHIVE --triton DIR --inductor DIR [--merge OLD_ARCHIVE]
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastkernels.tuning_picks import PICK_PATTERNS, collect, pick_files, read_archive, restore  # noqa: E402

__all__ = ["PICK_PATTERNS", "collect", "pick_files", "read_archive", "restore"]


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

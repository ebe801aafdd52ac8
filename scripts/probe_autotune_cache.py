"""Does a coordinate-descent pick Inductor saved in one process spare the next process the tuning? A GPU probe.

Compiles softmax's production path (`torch.softmax(x, -1, dtype=float32).to(x.dtype)`) under max-autotune over the
softmax task's five shapes in three processes: `first` on empty caches; `picks` on an empty FX graph cache seeded
with the `.best_config` files `first` left (scripts/tuning_picks.py, as a bare machine restores them); `warm` on
`first`'s caches (every graph an FX-graph-cache hit). Each process prints, per kernel, what Inductor's autotune cache
answered (hit or miss, with how many candidate configurations and whether the entry came from coordinate descent)
and how many coordinate-descent benchmarks ran, and lists the `.best_config` files it left.
Usage (device): python scripts/probe_autotune_cache.py [--no-fixes]   (--no-fixes: torch as shipped)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPES = [(1, 128256), (64, 128256), (8192, 8), (8192, 60), (8192, 256)]  # tasks/L1/softmax cases


def child(fixes: bool) -> None:
    import torch
    from torch._dynamo.utils import counters
    from torch._inductor.runtime import triton_heuristics as heuristics

    if fixes:
        from fastkernels.inductor_fixes import install

        print("fixes:", install())
    original = heuristics.check_autotune_cache

    def check(configs, filename, inductor_meta):
        found = original(configs, filename, inductor_meta)
        state = found[2].get("autotune_cache_state")
        marked = getattr(found[0][0], "found_by_coordesc", False) if len(found[0]) == 1 else None
        print(f"  cache {Path(filename or '?').stem[:12]}: {state}, {len(configs)} candidate(s), "
              f"coordesc mark {marked}")
        return found

    heuristics.check_autotune_cache = check

    def softmax(x):
        return torch.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype)

    compiled = torch.compile(softmax, mode="max-autotune-no-cudagraphs", dynamic=False)
    for shape in SHAPES:
        before = counters["inductor"]["coordesc_tuning_bench"]
        compiled(torch.randn(shape, device="cuda", dtype=torch.bfloat16))
        torch.cuda.synchronize()
        print(f"{shape}: {counters['inductor']['coordesc_tuning_bench'] - before} coordinate-descent benchmarks",
              flush=True)


def best_configs(root: Path) -> list[str]:
    lines = []
    for path in sorted(root.rglob("*.best_config")):
        entry = json.loads(path.read_text())
        lines.append(f"  {path.stem[:12]} coordesc={entry.get('found_by_coordesc')} "
                     f"hash={str(entry.get('configs_hash'))[:8]}")
    return lines


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(fixes=sys.argv[2] == "1")
        return 0
    fixes = "--no-fixes" not in sys.argv
    from fastkernels import tuning_picks

    work = Path(tempfile.mkdtemp(prefix="probe-autotune-"))
    first = {"triton": work / "first" / "triton", "inductor": work / "first" / "inductor"}
    seeded = {"triton": work / "picks" / "triton", "inductor": work / "picks" / "inductor"}

    def run(label: str, caches: dict[str, Path]) -> None:
        print(f"== {label}", flush=True)
        environment = {**os.environ, "TRITON_CACHE_DIR": str(caches["triton"]),
                       "TORCHINDUCTOR_CACHE_DIR": str(caches["inductor"])}
        subprocess.run([sys.executable, __file__, "--child", "1" if fixes else "0"], env=environment, check=True)
        print("\n".join(best_configs(caches["inductor"])), flush=True)

    run("first: empty caches", first)
    found, _ = tuning_picks.collect(work / "picks.tgz", first)
    tuning_picks.restore(work / "picks.tgz", seeded)
    print(f"picks collected and restored: {found}")
    run("picks: an empty FX graph cache seeded with first's picks", seeded)
    run("warm: first's caches again", first)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What each process held on the GPU over a device call: a summary of the memory samples scripts/device-call.sh takes.

The samples file (`$OUT/mem/samples.txt`, or its .gz) repeats, every FK_SAMPLE_S seconds: `t EPOCH`, one
`PID, USED MiB` line a process with a GPU context (nvidia-smi --query-compute-apps), the GPU's `USED MiB`, then `PID
PPID RSS ARGS` for each process whose command line names python (ps). Printed: the GPU's peak, and per GPU process its
peak and when (seconds from the first sample), what it held at its last sample, its parent and its command, with a
process whose parent also held GPU memory marked as that process's child (the harness's judge is its worker's
child). The forty-fourth session read moe_experts' judge (49 GiB kept from the Mixtral prefill case on) this way.

Usage: python scripts/memory_samples.py SAMPLES [SAMPLES ...]
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

APP = re.compile(r"^(\d+), (\d+) MiB$")
TOTAL = re.compile(r"^(\d+) MiB$")
PROCESS = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$")


@dataclass
class Held:
    """One process's GPU memory over the samples (MiB, seconds from the first sample)."""

    peak_mib: int = 0
    peak_at_s: int = 0
    last_mib: int = 0
    last_at_s: int = 0


@dataclass
class Samples:
    gpu_peak_mib: int = 0
    gpu_peak_at_s: int = 0
    seconds: int = 0
    held: dict[int, Held] = field(default_factory=dict)
    parents: dict[int, int] = field(default_factory=dict)
    commands: dict[int, str] = field(default_factory=dict)


def read_samples(text: str) -> Samples:
    """Parse a samples file; a line of none of the three forms (nvidia-smi's own errors) is skipped."""
    samples, start, now = Samples(), None, 0
    for line in text.splitlines():
        if line.startswith("t "):
            epoch = int(line[2:])
            start = epoch if start is None else start
            now = epoch - start
            samples.seconds = now
        elif match := APP.match(line):
            pid, mib = int(match[1]), int(match[2])
            held = samples.held.setdefault(pid, Held())
            if mib > held.peak_mib:
                held.peak_mib, held.peak_at_s = mib, now
            held.last_mib, held.last_at_s = mib, now
        elif match := TOTAL.match(line):
            if int(match[1]) > samples.gpu_peak_mib:
                samples.gpu_peak_mib, samples.gpu_peak_at_s = int(match[1]), now
        elif match := PROCESS.match(line):
            samples.parents[int(match[1])] = int(match[2])
            samples.commands[int(match[1])] = match[4]
    return samples


def report(samples: Samples) -> list[str]:
    lines = [f"{samples.seconds} s sampled; the GPU's peak {samples.gpu_peak_mib / 1024:.1f} GiB at "
             f"{samples.gpu_peak_at_s} s"]
    for pid, held in sorted(samples.held.items(), key=lambda item: -item[1].peak_mib):
        parent = samples.parents.get(pid)
        role = f"child of {parent}, a GPU process" if parent in samples.held else f"parent {parent}"
        lines.append(f"  pid {pid}: peak {held.peak_mib / 1024:.1f} GiB at {held.peak_at_s} s, "
                     f"{held.last_mib / 1024:.1f} GiB at its last sample ({held.last_at_s} s); {role}; "
                     f"{samples.commands.get(pid, '(command not sampled)')[:100]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.samples:
        if not path.is_file():
            sys.exit(f"memory_samples.py: no samples file {path}")
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode(errors="replace")
        print(f"{path}:")
        print("\n".join(report(read_samples(text))))


if __name__ == "__main__":
    main()

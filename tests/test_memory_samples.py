"""scripts/memory_samples.py reads the samples scripts/device-call.sh takes (nvidia-smi's per-process and total GPU
memory, then ps's python processes, every few seconds) into each GPU process's peak, when, what it held at the end,
and whose child it is: the worker's judge shows as its child."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import memory_samples  # noqa: E402

SAMPLES = """t 100
0 MiB
200 100 5000 python3 -m fastkernels
t 102
200, 1000 MiB
201, 500 MiB
1500 MiB
200 100 9000 python3 -m fastkernels
201 200 8000 python3 -m fastkernels
t 104
200, 3000 MiB
201, 49152 MiB
Failed to query: not a sample line
52152 MiB
t 106
200, 2048 MiB
201, 49152 MiB
51200 MiB
"""


def test_each_process_gets_its_peak_when_and_its_last_sample_and_the_gpu_its_peak():
    samples = memory_samples.read_samples(SAMPLES)
    assert samples.seconds == 6 and (samples.gpu_peak_mib, samples.gpu_peak_at_s) == (52152, 4)
    worker, judge = samples.held[200], samples.held[201]
    assert (worker.peak_mib, worker.peak_at_s, worker.last_mib, worker.last_at_s) == (3000, 4, 2048, 6)
    assert (judge.peak_mib, judge.peak_at_s, judge.last_mib) == (49152, 4, 49152)


def test_the_report_puts_the_largest_first_and_marks_a_child_of_a_gpu_process(tmp_path):
    lines = memory_samples.report(memory_samples.read_samples(SAMPLES))
    assert lines[0] == "6 s sampled; the GPU's peak 50.9 GiB at 4 s"
    assert lines[1].startswith("  pid 201: peak 48.0 GiB at 4 s, 48.0 GiB at its last sample (6 s); child of 200")
    assert lines[2].startswith("  pid 200: peak 2.9 GiB at 4 s, 2.0 GiB at its last sample (6 s); parent 100;")
    path = tmp_path / "samples.txt.gz"
    path.write_bytes(gzip.compress(SAMPLES.encode()))
    script = Path(memory_samples.__file__)
    shown = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True, check=True)
    assert shown.stdout.splitlines()[1:] == lines
    missing = subprocess.run([sys.executable, str(script), str(tmp_path / "none.txt")], capture_output=True, text=True)
    assert missing.returncode != 0 and "no samples file" in missing.stderr and "none.txt" in missing.stderr

"""scripts/host_launch.py: the host's time to queue one call of each production implementation, alone and through
the harness's clock, so the worker logs' launch figures can be split between the implementation and the harness."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "host_launch.py"


def host_launch(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *words], capture_output=True, text=True, timeout=300)


def test_every_production_implementation_gets_its_three_conditions_timed():
    done = host_launch("gelu", "rms_norm/cpu_small", "--calls", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "host launch times on cpu (cache flush: 16 MB overwritten), 5 calls a condition"
    condition = r"{} [0-9.]+ us median, [0-9.]+ us p99"
    row = "; ".join(condition.format(name) for name in ("bare", "clock", "paused"))
    # a task without /CASE takes its first case for the device; each available implementation gets a line
    assert re.fullmatch(rf"gelu/cpu_odd_erf torch_native: {row}", lines[1]), lines
    assert all(re.fullmatch(rf"rms_norm/cpu_small \S+: {row}", line) for line in lines[2:]) and len(lines) > 2, lines


def test_an_unknown_task_or_case_is_one_line_that_names_it():
    done = host_launch("gelu_mul")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("host_launch.py: error: unknown task 'gelu_mul'; did you mean"
                                            " gelu_and_mul, gelu, silu_and_mul?")
    done = host_launch("gelu/nocase")
    assert done.returncode == 2 and "error: gelu has no case 'nocase': ['cpu_odd_erf'," in done.stderr

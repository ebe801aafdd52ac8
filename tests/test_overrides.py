"""A mistyped command line gets one line of error naming the override and the nearest names, before Hydra runs."""

import subprocess
import sys
from pathlib import Path

import pytest

from fastkernels.overrides import check

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv, expected", [
    (["harness.max_timng_s=1"], "unknown config key harness.max_timng_s (harness.max_timng_s=1); "
                                "did you mean harness.max_timing_s"),
    (["harness.tolerance.bfloat16.atl=1"], "did you mean harness.tolerance.bfloat16.atol"),
    (["agent=local", "agent.pth=/kernels"], "unknown config key agent.pth (agent.pth=/kernels); did you mean agent.path"),
    (["hardware=h300"], "unknown hardware 'h300' (hardware=h300); did you mean h200"),
    (["clocks=lok"], "unknown clocks 'lok' (clocks=lok); did you mean lock? one of: lock, observe, verify"),
    (["agent=noop,reference"], "agent=noop,reference: several values sweep only under --multirun (-m)"),
    (["tasks.include=[rms_norm"], "cannot parse the override tasks.include=[rms_norm"),
])
def test_a_mistyped_override_is_named_with_the_nearest_names(argv, expected):
    problem = check(argv)
    assert problem is not None and expected in problem and "\n" not in problem


@pytest.mark.parametrize("argv", [
    [],
    ["hardware=cpu", "tasks.include=[rms_norm,silu_and_mul]", "harness.max_timing_s=5", "hydra.run.dir=/tmp/out"],
    ["hydra/launcher=fastkernels_slurm", "tasks=level1"],
    ["-m", "agent=noop,reference"],  # a sweep: each job composes on its own
    ["--cfg", "job"],  # Hydra's own options stay Hydra's
])
def test_overrides_that_compose_or_are_hydras_to_judge_pass(argv):
    assert check(argv) is None


def test_the_command_line_exits_2_with_that_one_line_and_runs_nothing(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fastkernels", "hardware=cpu", "harness.max_timng_s=1",
                           f"hydra.run.dir={tmp_path / 'run'}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["fastkernels: error: unknown config key harness.max_timng_s "
                                        "(harness.max_timng_s=1); did you mean harness.max_timing_s, "
                                        "harness.eager_timing_s, harness.max_rotating_sets?"]
    assert not (tmp_path / "run").exists()

"""scripts/device-call.sh: one device call runs the H200's lanes files on an H200 and the others' on any other card,
and samples the GPU's and the processes' memory beside the chain (a fake nvidia-smi and a recording chain here)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fake_nvidia_smi import fake_nvidia_smi

ROOT = Path(__file__).resolve().parents[1]


def call(tmp_path: Path, card: str) -> tuple[subprocess.CompletedProcess, Path]:
    bin_dir, out = fake_nvidia_smi(tmp_path / "bin", card), tmp_path / "out"
    chain = tmp_path / "chain.sh"
    chain.write_text('echo "chain: hardware=$FK_HARDWARE files=$*"; sleep 0.5\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "FK_CHAIN": str(chain),
           "FK_SAMPLE_S": "0.1"}
    result = subprocess.run(["bash", str(ROOT / "scripts/device-call.sh"), ".lanes/a.txt .lanes/b.txt",
                             ".lanes/h100.txt"], env=env, capture_output=True, text=True, timeout=30)
    return result, out


@pytest.mark.parametrize("card, files", [("NVIDIA H200", ".lanes/a.txt .lanes/b.txt"),
                                         ("NVIDIA H100 80GB HBM3", ".lanes/h100.txt")])
def test_the_card_picks_the_lanes_files_and_the_chain_runs_under_the_auto_profile(tmp_path, card, files):
    result, out = call(tmp_path, card)
    assert result.returncode == 0, result.stderr
    assert f"card: {card}" in result.stdout
    assert (out / "chain.log").read_text() == f"chain: hardware=auto files={files}\n"


def test_memory_is_sampled_while_the_chain_runs(tmp_path):
    _, out = call(tmp_path, "NVIDIA H200")
    samples = (out / "mem/samples.txt").read_text()
    assert sum(line.startswith("t ") for line in samples.splitlines()) >= 2
    assert "4242, 1024 MiB" in samples and "2048 MiB" in samples
    summary = (out / "mem/summary.txt").read_text()  # memory_samples.py's reading of them
    assert "the GPU's peak 2.0 GiB" in summary and "pid 4242: peak 1.0 GiB" in summary


def test_two_arguments_are_required(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "scripts/device-call.sh"), "only-one"], capture_output=True,
                            text=True)
    assert result.returncode == 2 and "usage" in result.stderr

"""scripts/device-tested-call.sh: one whole device call (GPU tests, the lanes for the card lent, packing) leaves
exactly out.tgz and the picks in $OUT, gives the lanes what the tests left less the packing margin, and runs the GPU
tests only on the card FK_GPU_TEST_CARD names (a fake nvidia-smi and a recording chain here)."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

from fake_nvidia_smi import fake_nvidia_smi

ROOT = Path(__file__).resolve().parents[1]


def run_call(tmp_path: Path, card: str, chain_exit: int = 0,
             **env_extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    bin_dir, out = fake_nvidia_smi(tmp_path / "bin", card), tmp_path / "out"
    chain = tmp_path / "chain.sh"  # what device-call.sh runs: records its budget and leaves picks as the chain does
    chain.write_text('echo "chain: budget=$FK_CALL_BUDGET files=$*"; mkdir -p "$OUT"; echo p > "$OUT/picks.tgz"\n'
                     f"exit {chain_exit}\n")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "FK_CHAIN": str(chain),
           "FK_SAMPLE_S": "0.1", "FK_BUDGET": "300", **env_extra}
    result = subprocess.run(["bash", "scripts/device-tested-call.sh", ".lanes/h200.txt", ".lanes/other.txt"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    return result, out


def members(archive: Path) -> dict[str, str]:
    with tarfile.open(archive) as tar:
        return {m.name.removeprefix("./"): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def test_the_call_leaves_one_archive_and_the_picks_beside_it(tmp_path):
    result, out = run_call(tmp_path, "NVIDIA H200")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["out.tgz", "picks.tgz"]
    files = members(out / "out.tgz")
    assert files["gpu/card.txt"].startswith("NVIDIA H200, GPU-0000")
    assert files["run/chain.log"].startswith("chain: budget=27")  # 300 s less the 25 s to pack, less what passed
    assert "files=.lanes/h200.txt" in files["run/chain.log"]
    assert "=== call:" in files["call.log"] and "GPU tests" not in files["call.log"]


def test_a_failed_chain_fails_the_call_and_what_it_left_still_comes_back(tmp_path):
    result, out = run_call(tmp_path, "NVIDIA H200", chain_exit=3)
    assert result.returncode == 3
    assert sorted(p.name for p in out.iterdir()) == ["out.tgz", "picks.tgz"]
    assert "lanes exit 3" in members(out / "out.tgz")["call.log"]


def test_the_gpu_tests_run_only_on_the_card_named(tmp_path):
    result, out = run_call(tmp_path, "NVIDIA H100 80GB HBM3", FK_GPU_TEST="cudnn_band", FK_GPU_TEST_CARD="H200")
    assert result.returncode == 0, result.stderr
    files = members(out / "out.tgz")
    assert "GPU tests" not in files["call.log"] and "gpu/gpu-tests.log" not in files
    assert "files=.lanes/other.txt" in files["run/chain.log"]


def test_a_budget_and_two_lanes_arguments_are_required(tmp_path):
    env = {**os.environ, "OUT": str(tmp_path)}
    env.pop("FK_BUDGET", None)
    one = subprocess.run(["bash", "scripts/device-tested-call.sh", "only-one"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert one.returncode == 2 and "usage" in one.stderr
    unbudgeted = subprocess.run(["bash", "scripts/device-tested-call.sh", "a", "b"], cwd=ROOT, env=env,
                                capture_output=True, text=True)
    assert unbudgeted.returncode != 0 and "FK_BUDGET" in unbudgeted.stderr

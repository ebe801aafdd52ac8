"""scripts/compile_candidates.py: every Triton kernel a candidate launches on its CPU cases, compiled for a GPU
(sm_90) by Triton's own compiler on this GPU-less machine, so a kernel only the interpreter accepts is found before
the lent GPU's time is spent on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "candidates" / "gpu_compile_error"
GOOD_QUICK_GELU = '''
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2), triton.Config({"BLOCK": 1024}, num_warps=4)],
                 key=["n"])
@triton.jit
def _quick_gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x * tl.sigmoid(1.702 * x)).to(out_ptr.dtype.element_ty), mask=offs < n)


class QuickGELU(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _quick_gelu_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
        return out
'''


def compile_candidates(agent_dir: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "scripts/compile_candidates.py", str(agent_dir), *args], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=600)


def test_every_shipped_reference_candidate_compiles_for_hopper():
    done = compile_candidates(ROOT / "agents" / "reference")
    shipped = len(list((ROOT / "agents" / "reference").glob("L*/*.py")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{shipped} of {shipped} candidates compiled"
    # two CPU cases, two block shapes: one kernel compiled twice
    swinv2 = "swinv2_window_attention: 1 kernel(s), 2 variant(s) compiled for sm_90: _window_attention_kernel"
    assert swinv2 in done.stdout.splitlines()


def test_a_kernel_only_the_interpreter_accepts_fails_in_one_line_and_the_other_candidates_still_compile(tmp_path):
    # the broken candidate passes its task on the CPU cases under the interpreter ...
    check = ("import sys; sys.path.insert(0, 'tests'); from pathlib import Path; "
             "from task_library import judged_on_cpu_cases; from fastkernels.implementations import import_file; "
             f"judged_on_cpu_cases('hardswish', import_file(Path('{BROKEN}/L1/hardswish.py'), 'broken').Hardswish)")
    interpreted = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env={**os.environ, "TRITON_INTERPRET": "1"},
                                 capture_output=True, text=True, timeout=600)
    assert interpreted.returncode == 0, interpreted.stderr
    # ... and Triton's compiler refuses it, while a good candidate beside it compiles (both autotuning configs)
    (tmp_path / "L1").mkdir()
    (tmp_path / "L1" / "hardswish.py").write_text((BROKEN / "L1" / "hardswish.py").read_text())
    (tmp_path / "L1" / "quick_gelu.py").write_text(GOOD_QUICK_GELU)
    done = compile_candidates(tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("hardswish: FAILED: CompilationError at ")
    assert "Cannot access global variable SIXTH" in lines[0]
    assert lines[1] == "quick_gelu: 1 kernel(s), 2 variant(s) compiled for sm_90: _quick_gelu_kernel"  # 2 configs
    assert lines[-1] == "1 of 2 candidates compiled"


def test_a_directory_without_candidates_is_a_one_line_error(tmp_path):
    done = compile_candidates(tmp_path / "no-such-agent")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].endswith(
        "no-such-agent: no candidate files (an agent's directory holds L1/NAME.py, L2/NAME.py, ...)")

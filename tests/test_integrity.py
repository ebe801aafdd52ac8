"""The integrity snapshot: taken before the candidate is imported, it names afterwards every patched function and every
changed global setting that decides which kernel a baseline gets or how fast it runs. (tests/test_exploits.py drives
the same checks through a real worker; these pin down what is compared.)"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from fastkernels.integrity import Integrity


def test_an_untouched_process_reports_nothing():
    assert Integrity().changed() == ""


def test_a_patched_torch_function_is_named(monkeypatch):
    snapshot = Integrity()
    monkeypatch.setattr(torch, "rsqrt", lambda x: x)
    assert "patched torch.rsqrt" in snapshot.changed()


def test_a_torch_triton_or_cuda_environment_variable_set_after_the_snapshot_is_named(monkeypatch):
    # Inductor and Triton read their cache directories and switches when they compile, after the candidate's import
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/run/baseline-cache")
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)  # an earlier test's in-process compile may have set it
    snapshot = Integrity()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/planted")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/tmp/planted-triton")
    changed = snapshot.changed()
    assert "os.environ (torch, Triton and CUDA variables): added ['TORCHINDUCTOR_CACHE_DIR=/tmp/planted'," in changed
    assert "'TRITON_CACHE_DIR=/tmp/planted-triton']" in changed
    assert "removed ['TORCHINDUCTOR_CACHE_DIR=/run/baseline-cache']" in changed


def test_triton_cache_directory_and_launch_hooks_set_in_python_are_named(monkeypatch):
    from triton import knobs

    snapshot = Integrity()
    def drag(*args):
        pass

    monkeypatch.setattr(knobs.cache, "dir", "/tmp/planted-triton")
    hooks = knobs.runtime.launch_enter_hook
    if hasattr(hooks, "add"):  # a chain of hooks (Triton 3.5 on), added to in place
        hooks.add(drag)
        try:
            changed = snapshot.changed()
        finally:
            hooks.remove(drag)
    else:
        monkeypatch.setattr(knobs.runtime, "launch_enter_hook", drag)
        changed = snapshot.changed()
    assert "triton.knobs.cache.dir" in changed and "-> '/tmp/planted-triton'" in changed
    assert "triton.knobs.runtime.launch_enter_hook" in changed and ".drag at " in changed


def test_turning_off_inductors_local_autotuning_cache_is_named():
    import torch._inductor.config as inductor_config

    snapshot = Integrity()
    inductor_config.autotune_local_cache = False  # a config module: set and restored by hand, not by monkeypatch
    try:
        assert "torch._inductor.config.autotune_local_cache True -> False" in snapshot.changed()
    finally:
        inductor_config.autotune_local_cache = True
    assert snapshot.changed() == ""


def test_other_environment_variables_are_the_candidates_own(monkeypatch):
    snapshot = Integrity()
    monkeypatch.setenv("MY_KERNEL_BLOCK", "128")
    monkeypatch.setenv("OMP_DISPLAY_ENV", "false")
    assert snapshot.changed() == ""


def test_inductors_own_cache_directory_variable_is_settled_before_the_snapshot(monkeypatch, tmp_path):
    # Inductor rewrites TORCHINDUCTOR_CACHE_DIR (made absolute) at every compile: a relative one set by the run, or
    # none, must not read as changed after a baseline's first compile
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "relative-cache")
    snapshot = Integrity()
    compiled = torch.compile(torch.nn.Linear(4, 4), dynamic=False)
    compiled(torch.randn(2, 4))
    assert snapshot.changed() == ""


def test_a_switched_off_attention_backend_is_named():
    snapshot = Integrity()
    torch.backends.cuda.enable_flash_sdp(False)
    try:
        assert "torch.backends.cuda.flash_sdp_enabled() True -> False" in snapshot.changed()
    finally:
        torch.backends.cuda.enable_flash_sdp(True)
    assert snapshot.changed() == ""


def test_a_shrunk_gpu_memory_fraction_is_named(monkeypatch):
    # The caching allocator's limit, read only where CUDA is up: faked here, as this machine has no GPU.
    fraction = [1.0]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda *args: fraction[0], raising=False)
    monkeypatch.setattr(torch.cuda, "get_allocator_backend", lambda: "native", raising=False)
    snapshot = Integrity()
    fraction[0] = 0.01
    assert "torch.cuda.get_per_process_memory_fraction() 1.0 -> 0.01" in snapshot.changed()


def test_a_setting_that_could_not_be_read_at_the_snapshot_is_not_compared(monkeypatch):
    cuda_up = [False]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: cuda_up[0])
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda *args: 0.5, raising=False)
    monkeypatch.setattr(torch.cuda, "get_allocator_backend", lambda: "native", raising=False)
    snapshot = Integrity()  # CUDA not up yet: no allocator settings taken
    cuda_up[0] = True
    assert snapshot.changed() == ""


def test_switching_off_dynamo_or_inductor_fusion_is_named():
    import torch._dynamo.config
    import torch._inductor.config

    snapshot = Integrity()
    torch._dynamo.config.disable = True
    torch._inductor.config.max_fusion_size = 1
    try:
        changed = snapshot.changed()
        assert "torch._dynamo.config.disable False -> True" in changed
        assert "torch._inductor.config.max_fusion_size 64 -> 1" in changed
    finally:
        torch._dynamo.config.disable = False
        torch._inductor.config.max_fusion_size = 64
    assert snapshot.changed() == ""


def test_compiling_a_module_changes_none_of_the_compiler_switches():
    snapshot = Integrity()
    compiled = torch.compile(torch.nn.Linear(4, 4), dynamic=False)
    compiled(torch.randn(2, 4))
    assert snapshot.changed() == ""


def test_a_torch_function_mode_left_in_force_is_named():
    from torch.overrides import TorchFunctionMode

    class Drag(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    snapshot = Integrity()
    mode = Drag()
    mode.__enter__()
    try:
        assert "torch function modes: added ['test_a_torch_function_mode_left_in_force_is_named.<locals>.Drag']" \
            in snapshot.changed()
    finally:
        mode.__exit__(None, None, None)
    assert snapshot.changed() == ""


def test_a_global_module_hook_is_named():
    from torch.nn.modules.module import register_module_forward_pre_hook

    snapshot = Integrity()
    handle = register_module_forward_pre_hook(lambda module, args: None)
    try:
        assert "nn.Module global hooks {} -> {'forward_pre_hooks': 1}" in snapshot.changed()
    finally:
        handle.remove()
    assert snapshot.changed() == ""


def test_torchs_own_first_vmap_is_not_taken_for_an_intercepting_kernel():
    """torch.vmap registers aten kernels from Python the first time any code uses it (flex_attention's block masks
    do): on the H200 that read as REWARD_HACK for honest sliding-window rows. It runs in a fresh interpreter, since
    another test may already have used vmap in this one."""
    import subprocess
    import sys

    script = ("import torch\nfrom fastkernels.integrity import Integrity\nsnapshot = Integrity()\n"
              "torch.vmap(torch.sin)(torch.randn(3, 2))\nprint(repr(snapshot.changed()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "''"


def test_inductors_own_ptxas_setting_at_its_first_compile_is_not_a_change(monkeypatch, tmp_path):
    # A CUDA build of torch ships bin/ptxas, and Inductor points TRITON_PTXAS_PATH at it before its first compile,
    # which may come after the snapshot (a noop candidate's build runs its baseline's compiled function): on the H200
    # every compiled baseline's noop row read REWARD_HACK for it. Here a stand-in torch tree holds the ptxas.
    from torch._inductor.runtime import compile_tasks

    module_file = tmp_path / "torch" / "_inductor" / "runtime" / "compile_tasks.py"
    ptxas = Path(module_file).parents[1] / "bin" / "ptxas"
    ptxas.parent.mkdir(parents=True)
    ptxas.write_text("#!/bin/sh\n")
    ptxas.chmod(0o755)
    monkeypatch.setattr(compile_tasks, "__file__", str(module_file))
    monkeypatch.setenv("TRITON_PTXAS_PATH", "unset below, restored after")
    monkeypatch.delenv("TRITON_PTXAS_PATH")
    compile_tasks._set_triton_ptxas_path.cache_clear()
    try:
        snapshot = Integrity()
        assert os.environ["TRITON_PTXAS_PATH"] == str(ptxas)  # settled before the snapshot
        compile_tasks._set_triton_ptxas_path()  # what the first compile does
        assert snapshot.changed() == ""
    finally:
        compile_tasks._set_triton_ptxas_path.cache_clear()

"""What the worker fork server imports once (fastkernels/preload.py) so that no worker pays for it again."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, check=True)
    return result.stdout.strip()


def test_after_the_preload_a_compiled_task_module_imports_nothing_more_from_inductor():
    # a task module builds its shared compiled function at import (fastkernels.compiled): torch.compile's imports
    # took 3.5-4.5 s a task on the H200 machine (2026-12-01) when each worker paid them
    out = _run("""
        import sys
        import fastkernels.preload
        before = set(sys.modules)
        from fastkernels.config import TASKS_DIR
        from fastkernels.implementations import import_file
        import_file(TASKS_DIR / "L1" / "softmax" / "torch_compile.py", namespace="tasks.softmax")
        print(sorted(m for m in set(sys.modules) - before if m.startswith("torch._inductor")))
    """)
    assert out == "[]"


def test_the_preload_starts_no_thread_and_no_process_beyond_importing_torch():
    # the server forks every worker: a thread or a child started here would not exist in them (importing torch
    # starts one native thread of its own, which every forked torch program lives without)
    out = _run("""
        import os, threading
        def threads(): return len(os.listdir(f"/proc/{os.getpid()}/task"))
        import torch
        before = threads()
        import fastkernels.preload
        children = open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()
        print(threads() - before, threading.active_count(), len(children))
    """)
    assert out == "0 1 0"


def test_on_a_cpu_build_of_torch_inductors_vector_isa_is_picked_before_any_worker_forks():
    # each case compiles into a fresh cache directory (case_caches.py), where the pick builds its test programs
    # again: about 20 s of every CPU worker's first compile on this 2-core machine (2026-12-08) when workers paid it
    out = _run("""
        import torch
        import fastkernels.preload
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list
        print(torch.version.cuda is None, valid_vec_isa_list.cache_info().currsize)
    """)
    cpu_build, picked = out.split()
    assert picked == ("1" if cpu_build == "True" else "0"), out

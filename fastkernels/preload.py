"""What the worker fork server imports once, so that no worker pays for it again (see launch.py).

Only imports (and, on a CPU build of torch, Inductor's vector-ISA pick): nothing here may run a torch operation or
touch the GPU, since every worker is forked from this state (a CUDA context does not survive fork). Kernel libraries
that query the GPU while importing (flash-linear-attention reads the compute capability) stay out; workers import
them themselves. A module that fails to import is skipped.
"""

from __future__ import annotations

import importlib
import os

from fastkernels.garbage_collector import freeze_harness_objects
from fastkernels.launch import import_time_environment

MODULES = (
    "torch", "torch.nn.functional", "torch._dynamo", "triton", "triton.language",
    "fastkernels.worker", "fastkernels.evaluate", "fastkernels.judge", "fastkernels.plan", "fastkernels.integrity",
    "fastkernels.graphs", "fastkernels.checks", "fastkernels.clocks", "fastkernels.compiled",
    # what `torch.compile(...)` imports when a task module builds its shared compiled function (compiled.py):
    # ~560 modules, 0.6 s here and 3.5-4.5 s a task on the H200 machine (2026-12-01 worker logs, the "baselines and
    # candidate loaded" phase), paid once a lane instead of once a task
    "torch._inductor.compile_fx", "torch._inductor.compiler_bisector",
    # the kernel launchers the integrity snapshot watches (integrity.LAUNCHER_CLASSES): ~1 s to import
    "torch._inductor.runtime.triton_heuristics", "triton.runtime.autotuner", "triton.compiler.compiler",
    # Liger-Kernel's operator modules the tasks use (it asks NVML, not CUDA, whether a GPU exists: see launch.py)
    "liger_kernel.ops", "liger_kernel.ops.geglu", "liger_kernel.ops.layer_norm", "liger_kernel.ops.qwen2vl_mrope",
    "liger_kernel.ops.rope", "liger_kernel.ops.swiglu",
)

for _name in MODULES:
    try:
        importlib.import_module(_name)
    except Exception:  # noqa: BLE001 - an optional library absent or broken here; its worker reports it
        pass

# Inductor's C++ backend (CPU) picks the CPU's vector ISA by building and loading test programs in its cache directory:
# about 20 s on 2 busy cores (2026-12-08), paid by every worker's first CPU compile since each case compiles into a
# fresh directory (case_caches.py). Picked once here, every forked worker inherits the answer. A CUDA build of torch
# skips it: its fork server would pay for a pick its GPU compiles never ask for.
import torch  # noqa: E402 - imported above already (MODULES); named here for its build

if torch.version.cuda is None:
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        pick_vec_isa()
    except Exception:  # noqa: BLE001 - no C++ compiler here: a worker that compiles reports it
        pass

# What the modules above saw of the import-time environment (launch.IMPORT_TIME_ENV): a forked worker that needs other
# values is executed fresh (launch._run_forked), and the worker's log names them
IMPORTED_UNDER = import_time_environment(os.environ)

# Every worker forked from here inherits these objects frozen: its collections skip them (fastkernels.garbage_collector)
freeze_harness_objects()

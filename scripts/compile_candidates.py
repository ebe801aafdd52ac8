"""Compiles every Triton kernel an agent's candidates launch, for a GPU architecture, on a machine without a GPU.

Why: the CPU tests run candidates under Triton's interpreter, which accepts code that Triton's GPU compiler rejects
(a value the compiler needs as a constexpr, a shape tl.dot cannot take, a type that only exists on the device), and
a candidate that fails to compile there is found only in the lent GPU's scarce time. This runs each candidate's
forward on its task's CPU cases, as the harness builds them, with Triton's launch replaced: every kernel launch is
compiled by Triton's own compiler (to PTX and cubin with the ptxas Triton ships) for `--arch` instead of run, so no
kernel executes and the forward's outputs are never read. Argument types are taken from the launch (tensors by
dtype, ints as int32 or int64 by value, floats as fp32), without Triton's value specialisations (an int equal to 1,
alignment), which change the generated code but not whether it compiles.
An autotuned kernel has every configuration compiled (autotuning would compile them all before timing them).
Prints one line a candidate (its kernels, or the first error) and exits 1 if any failed.
Usage: python scripts/compile_candidates.py AGENT_DIR [--tasks NAME,...] [--arch 90]
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import traceback
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)  # the compiled path, whatever the caller's environment

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.runtime.autotuner import Autotuner  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastkernels.build import build, eager_classes, reference_state  # noqa: E402
from fastkernels.implementations import load_candidate, load_implementation  # noqa: E402
from fastkernels.inputs import generator, make_inputs, stream_seed  # noqa: E402
from fastkernels.plan import candidate_path  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402

LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid"}
POINTER_TYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32", torch.float64: "fp64",
                 torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
                 torch.bool: "i1", torch.float8_e4m3fn: "fp8e4nv", torch.float8_e5m2: "fp8e5"}


def argument_type(name: str, value: object) -> str:
    """The Triton signature type of one runtime argument."""
    if isinstance(value, torch.Tensor):
        if value.dtype not in POINTER_TYPES:
            raise TypeError(f"argument {name}: tensors of {value.dtype} are not supported here")
        return "*" + POINTER_TYPES[value.dtype]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else ("u64" if value >= 2**63 else "i64")
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"argument {name}: cannot type a {type(value).__name__} for a kernel launch")


class Compiler:
    """Stands in for JITFunction.run: compiles each distinct launch once for `target` and counts the kernels."""

    def __init__(self, target: GPUTarget) -> None:
        self.target = target
        self.seen: set[tuple] = set()  # every launch signature compiled so far (each compiled once)
        self.kernels: set[str] = set()  # the current candidate's kernels ...
        self.variants: set[tuple] = set()  # ... and their distinct signatures, constexprs and launch options

    def run(self, kernel: JITFunction, *args, grid, warmup, **kwargs):  # noqa: ARG002 - JITFunction.run's shape
        options = {key: kwargs.pop(key) for key in list(kwargs) if key in LAUNCH_OPTIONS}
        bound = inspect.signature(kernel.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        signature, constexprs = {}, {}
        for param, (name, value) in zip(kernel.params, bound.arguments.items()):
            if param.is_constexpr or value is None:
                signature[name], constexprs[name] = "constexpr", value
            else:
                signature[name] = argument_type(name, value)
        key = (kernel.fn.__qualname__, kernel.fn.__module__, tuple(signature.items()),
               tuple(sorted((k, repr(v)) for k, v in constexprs.items())), tuple(sorted(options.items())))
        if key not in self.seen:
            triton.compile(ASTSource(kernel, signature, constexprs), target=self.target, options=options)
            self.seen.add(key)
        self.kernels.add(kernel.fn.__name__)
        self.variants.add(key)


def compile_every_config(autotuner: Autotuner, *args, **kwargs):
    """Stands in for Autotuner.run: each of the kernel's configurations is launched (so compiled) once, as
    autotuning on a GPU would compile them all before timing them."""
    for config in autotuner.configs:
        autotuner.fn.run(*args, **{**kwargs, **config.all_kwargs()})


def one_line(error: BaseException) -> str:
    """The error in one line: Triton's CompilationError puts the source excerpt first and the cause last, with the
    kernel position ("at LINE:COL") on its first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        where = traceback.extract_tb(error.__traceback__)[-1]
        return f"{type(error).__name__} ({Path(where.filename).name}:{where.lineno})"
    if type(error).__name__ == "CompilationError" and len(lines) > 1:
        return f"CompilationError {lines[0].rstrip(':')}: {lines[-1]}"
    return f"{type(error).__name__}: {lines[0]}"


def compile_candidate(registry: Registry, task: str, agent_dir: Path, compiler: Compiler) -> list[str]:
    """Run the candidate of `task` on every CPU case with launches compiled instead of run: the kernels it used."""
    manifest = registry.get(task)
    cls = load_candidate(candidate_path(agent_dir, manifest), manifest)
    components = eager_classes(registry, registry.closure(task), "cpu")
    eager_cls = load_implementation(registry.directory(task), manifest.implementations.eager, "cpu")
    compiler.kernels, compiler.variants = set(), set()
    for case in (c for c in manifest.cases if c.tier == "cpu"):
        state = reference_state(manifest, case, eager_cls, components, "cpu", 0)
        inputs = make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(0, task, case.name, "round", 0)))
        with torch.no_grad():
            build(cls, case, components, state, "cpu", "candidate")(**inputs)
    return sorted(compiler.kernels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent_dir", type=Path, help="an agent's candidate directory (L1/NAME.py, L2/NAME.py, ...)")
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: every candidate found)")
    parser.add_argument("--arch", type=int, default=90, help="CUDA compute capability as one number (90: Hopper)")
    args = parser.parse_args()
    registry = Registry()
    found = sorted(path.stem for path in args.agent_dir.glob("L*/*.py"))
    if not args.tasks and not found:
        parser.error(f"{args.agent_dir}: no candidate files (an agent's directory holds L1/NAME.py, L2/NAME.py, ...)")
    tasks = args.tasks.split(",") if args.tasks else [name for name in found if name in registry.names]
    compiler = Compiler(GPUTarget("cuda", args.arch, 32))
    JITFunction.run = lambda kernel, *a, **k: compiler.run(kernel, *a, **k)
    Autotuner.run = compile_every_config  # benchmarking configs needs a GPU: compile each one instead
    failed = 0
    for task in tasks:
        try:
            kernels = compile_candidate(registry, task, args.agent_dir, compiler)
        except Exception as error:  # noqa: BLE001 - one broken candidate never stops the others
            failed += 1
            print(f"{task}: FAILED: {one_line(error)}")
            continue
        print(f"{task}: {len(kernels)} kernel(s), {len(compiler.variants)} variant(s) compiled for sm_{args.arch}: "
              f"{', '.join(kernels) or 'none'}")
    print(f"{len(tasks) - failed} of {len(tasks)} candidates compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

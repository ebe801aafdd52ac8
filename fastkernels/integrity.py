"""Detects a candidate that patches the harness, the timers, torch or the baselines' code.

A snapshot is taken after the baselines are loaded and before the candidate is imported: the identity of every
callable in the watched modules and classes, and the global numeric settings that change what a baseline computes
or how fast (TF32, matmul precision, thread count). `changed()` names whatever differs later. The harness also binds
its timers before any candidate is imported (timing.py), so a patch cannot fake a time even between checks. Settings
include the backend switches that pick a baseline's kernel (flash/cuDNN attention, cuDNN, the BLAS library) and the
Dynamo/Inductor switches that decide whether and how well a compiled baseline is compiled, and what intercepts every
call a baseline makes (torch function and dispatch modes, nn.Module's global hooks, aten kernels registered from
Python), and the environment variables torch, Triton and CUDA read while a baseline compiles or runs (a candidate
that points Inductor's or Triton's cache at a directory it planted slow tuning picks or kernels in changes no
function).
"""

from __future__ import annotations

import multiprocessing.connection
import os
import sys
from typing import Any, Callable

import torch

from fastkernels.environ import set_environment
from fastkernels.live_objects import Fingerprint, differences, fingerprint

WATCHED_MODULES = ("time", "gc", "torch", "torch.nn", "torch.nn.functional", "torch.cuda", "torch.linalg",
                   "torch.autograd", "triton", "triton.testing", "nvtx", "numpy",
                   # where a compiled baseline's kernels get their launch configurations (fastkernels.inductor_fixes)
                   "torch._inductor.runtime.triton_heuristics", "torch._inductor.runtime.autotune_cache")
WATCHED_PREFIXES = ("fastkernels", "fastkernels_loaded.tasks", "liger_kernel", "flash_attn")
WATCHED_CLASSES: tuple[type, ...] = (torch.Tensor, torch.nn.Module, torch.cuda.Event, torch.cuda.Stream,
                                     multiprocessing.connection.Connection)


def _backend_switches() -> dict[str, Any]:
    """The switches that choose which kernel a baseline gets: turning off flash/cuDNN attention or cuDNN sends a
    production baseline to a slower path (the candidate then "wins"), without patching a single function."""
    backends = torch.backends
    getters = {
        "torch.backends.cudnn.enabled": lambda: backends.cudnn.enabled,
        "torch.backends.cudnn.benchmark": lambda: backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": lambda: backends.cudnn.deterministic,
        "torch.backends.cuda.flash_sdp_enabled()": backends.cuda.flash_sdp_enabled,
        "torch.backends.cuda.mem_efficient_sdp_enabled()": backends.cuda.mem_efficient_sdp_enabled,
        "torch.backends.cuda.math_sdp_enabled()": backends.cuda.math_sdp_enabled,
        "torch.backends.cuda.cudnn_sdp_enabled()": getattr(backends.cuda, "cudnn_sdp_enabled", None),
        "torch.backends.cuda.preferred_blas_library()": getattr(backends.cuda, "preferred_blas_library", None),
        "torch.backends.cuda.preferred_linalg_library()": getattr(backends.cuda, "preferred_linalg_library", None),
        "torch.backends.mkldnn.enabled": lambda: backends.mkldnn.enabled,
    }
    return {name: getter() for name, getter in getters.items() if getter is not None}


# Dynamo and Inductor switches that decide whether a compiled (torch_compile) baseline runs compiled, and how well:
# a candidate that turns compilation off or caps recompiles at import sends those baselines to eager PyTorch, and
# one that stops fusion makes their kernels slower, without patching a function.
DYNAMO_SWITCHES = ("disable", "recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                   "accumulated_cache_size_limit", "suppress_errors")
INDUCTOR_SWITCHES = ("max_fusion_size", "epilogue_fusion", "aggressive_fusion", "pattern_matcher", "max_autotune",
                     "max_autotune_pointwise", "max_autotune_gemm", "coordinate_descent_tuning", "fallback_random",
                     "freezing", "split_reductions", "triton.cudagraphs",
                     # where a compiled baseline's graphs, kernels and autotuning picks are looked up: a candidate
                     # that turns a local cache off sends it to re-tune, one that turns a remote one on can serve it
                     "fx_graph_cache", "autotune_local_cache", "fx_graph_remote_cache", "autotune_remote_cache",
                     # one compile process keeps each case's fresh cache directory (case_caches.py)
                     "compile_threads")
# Triton's knobs (set in Python or through the environment, read when a kernel compiles, loads or launches): its cache
# directory and autotuning cache decide which compiled kernel and which autotuning pick a Triton baseline (Liger,
# FLA, Inductor's kernels) gets; its launch and load hooks run around every launch, the baselines' included.
TRITON_KNOBS = ("cache.dir", "cache.override_dir", "cache.manager_class", "cache.remote_manager_class",
                "autotuning.cache", "compilation.always_compile", "runtime.launch_enter_hook",
                "runtime.launch_exit_hook", "runtime.kernel_load_start_hook", "runtime.kernel_load_end_hook",
                "runtime.jit_cache_hook", "runtime.jit_post_compile_hook")


def _compiler_settings() -> dict[str, Any]:
    """The DYNAMO_SWITCHES, INDUCTOR_SWITCHES and TRITON_KNOBS this torch and Triton release has (a missing one is
    not compared)."""
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    sources: list[tuple[str, Any, tuple[str, ...]]] = [("torch._dynamo.config", dynamo_config, DYNAMO_SWITCHES),
                                                       ("torch._inductor.config", inductor_config, INDUCTOR_SWITCHES)]
    try:
        from triton import knobs

        sources.append(("triton.knobs", knobs, TRITON_KNOBS))
    except ImportError:  # no Triton, or a release before its knobs
        pass
    found: dict[str, Any] = {}
    for prefix, config, names in sources:
        for name in names:
            value: Any = config
            try:
                for part in name.split("."):
                    value = getattr(value, part)
            except AttributeError:
                continue
            calls = getattr(value, "calls", None)  # Triton's HookChain: hooks are added to it in place
            found[f"{prefix}.{name}"] = list(calls) if isinstance(calls, list) else value
    return found


def _interceptors() -> dict[str, Any]:
    """What runs around or instead of every torch call, module forward or Python call of the process: torch function
    and dispatch modes, nn.Module's global hooks, aten kernels registered with the dispatcher from Python (shape-only
    Meta kernels aside), the interpreter's profile and trace functions. One installed at import sees every call a baseline makes and can add work to it while letting the
    candidate's own calls through, without patching a Python function or leaving a setting changed."""
    from torch.nn.modules import module as nn_module
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    hooks = {name: len(getattr(nn_module, name)) for name in dir(nn_module)
             if name.startswith("_global_") and name.endswith("hooks") and isinstance(getattr(nn_module, name), dict)}
    registered = getattr(torch.library, "_impls", set())  # "namespace/op/dispatch key" of kernels given from Python
    return {
        "aten kernels registered from Python": sorted(entry for entry in registered
                                                      if entry.startswith("aten/") and not entry.endswith("/Meta")),
        "sys.getprofile()": sys.getprofile(),
        "sys.gettrace()": sys.gettrace(),
        "nn.Module global hooks": {name.removeprefix("_global_"): count for name, count in hooks.items() if count},
        "torch function modes": [type(mode).__qualname__ for mode in _get_current_function_mode_stack()],
        "torch dispatch modes": [type(mode).__qualname__ for mode in _get_current_dispatch_mode_stack()],
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.get_default_device()": str(torch.get_default_device()),
    }


def _allocator_settings() -> dict[str, Any]:
    """On a GPU, the caching allocator's limits: a tiny memory fraction makes every baseline call free and re-map
    memory (slow) while a candidate that allocated up front is untouched. Read only where CUDA is already up."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return {}
    getters = {
        "torch.cuda.get_per_process_memory_fraction()": getattr(torch.cuda, "get_per_process_memory_fraction", None),
        "torch.cuda.get_allocator_backend()": getattr(torch.cuda, "get_allocator_backend", None),
    }
    found: dict[str, Any] = {}
    for name, getter in getters.items():
        try:
            if getter is not None:
                found[name] = getter()
        except Exception:  # noqa: BLE001 - a torch release without it: the setting is simply not compared
            continue
    return found


# Environment variables read after the snapshot by the libraries the baselines use: Inductor and Triton read their
# cache directories and many switches when they compile (not only at import), and CUDA libraries read theirs when
# they load. Set before the candidate is imported, they are the run's; set by it, they steer its baselines.
STEERING_ENVIRONMENT_PREFIXES = ("TORCH", "PYTORCH", "TRITON", "CUDA", "CUBLAS", "CUDNN", "NVIDIA_TF32", "NCCL")


def _steering_environment() -> list[str]:
    """`KEY=VALUE` of every environment variable with a STEERING_ENVIRONMENT_PREFIXES prefix, sorted."""
    return sorted(f"{key}={value}" for key, value in os.environ.items()
                  if key.startswith(STEERING_ENVIRONMENT_PREFIXES))


ENVIRONMENT = "os.environ (torch, Triton and CUDA variables)"


def _signal_handlers() -> dict[str, Any]:
    """The Python handler of every signal, and the interval timers: a handler with a timer runs candidate code in the
    middle of whatever the harness is doing (a baseline's timed call, its first compile), past every patch check."""
    import signal

    found: dict[str, Any] = {}
    for signum in sorted(signal.valid_signals()):
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            found[f"signal.getsignal({signal.Signals(signum).name})"] = signal.getsignal(signum)
        except (ValueError, OSError):  # a real-time signal without a name, or one this platform refuses
            continue
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"):
        if hasattr(signal, name):
            found[f"signal.getitimer({name}) running"] = signal.getitimer(getattr(signal, name)) != (0.0, 0.0)
    return found


def _environment_settings() -> dict[str, Any]:
    """The settings that follow the cache variables: the environment itself and Triton's cache knobs."""
    settings = {ENVIRONMENT: _steering_environment()}
    try:
        from triton import knobs

        for name in ("dir", "override_dir"):
            settings[f"triton.knobs.cache.{name}"] = getattr(knobs.cache, name)
    except (ImportError, AttributeError):  # no Triton, or a release before its knobs
        pass
    return settings


def _settings() -> dict[str, Any]:
    return {
        ENVIRONMENT: _steering_environment(),
        **_signal_handlers(),
        **_backend_switches(),
        **_compiler_settings(),
        **_interceptors(),
        **_allocator_settings(),
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.get_num_threads()": torch.get_num_threads(),
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
    }


# Where compiled and Triton baselines launch their kernels (Inductor's CachingAutotuner, Triton's JIT and autotuner,
# its compiled kernels) and where compiled ones read their launch configurations (Inductor's AutotuneCache): a
# candidate that wraps one slows torch_compile, Liger and FLA baselines and not its own.
LAUNCHER_CLASSES = (("torch._inductor.runtime.triton_heuristics", "CachingAutotuner"),
                    ("torch._inductor.runtime.autotune_cache", "AutotuneCache"),
                    ("triton.runtime.jit", "JITFunction"), ("triton.runtime.autotuner", "Autotuner"),
                    ("triton.runtime.autotuner", "Heuristics"), ("triton.compiler.compiler", "CompiledKernel"))


def _launcher_classes() -> list[type]:
    """LAUNCHER_CLASSES that import here (no Triton, no Inductor runtime: nothing of theirs to watch)."""
    import importlib

    found = []
    for module_name, class_name in LAUNCHER_CLASSES:
        try:
            found.append(getattr(importlib.import_module(module_name), class_name))
        except (ImportError, AttributeError):
            continue
    return found


def _watched_namespaces() -> dict[str, dict[str, Any]]:
    spaces: dict[str, dict[str, Any]] = {}
    for name, module in list(sys.modules.items()):
        if module is None:
            continue
        if name in WATCHED_MODULES or name.startswith(WATCHED_PREFIXES):
            spaces[name] = vars(module)
    classes = list(WATCHED_CLASSES) + _launcher_classes()
    for name, namespace in list(spaces.items()):
        if name.startswith("fastkernels"):  # the harness's own classes: clocks, checks, the judge's client
            classes += [v for v in namespace.values() if isinstance(v, type) and v.__module__.startswith("fastkernels")]
    for cls in classes:
        spaces[f"{cls.__module__}.{cls.__qualname__}"] = dict(vars(cls))
    return spaces


def _callables() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for space, namespace in _watched_namespaces().items():
        for attribute, value in list(namespace.items()):
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                found[f"{space}.{attribute}"] = value
    return found


def _settle_torch_lazy_setup() -> None:
    """Do now what torch itself does on first use, so a baseline or candidate that legitimately uses it is not
    mistaken for one that patches torch: torch.compile wraps torch.manual_seed (at import) and nn.Module.__init__/
    __setstate__ (at its first compile); torch.vmap registers aten kernels for FuncTorchBatched from Python the first
    time anything maps (flex_attention's block masks do: honest sliding-window rows read REWARD_HACK on the H200)."""
    import torch._dynamo

    _settle_inductor_cache_dir()
    _settle_triton_ptxas_path()
    try:
        from torch._dynamo.mutation_guard import install_generation_tagging_init

        install_generation_tagging_init()
    except ImportError:  # another torch release: its first compile may then be reported; seen on 2.13
        pass
    try:
        from torch._functorch.predispatch import lazy_load_decompositions
    except ImportError:
        try:  # torch releases before the predispatch module
            from torch._functorch.vmap import lazy_load_decompositions
        except ImportError:
            return
    lazy_load_decompositions()


def _settle_inductor_cache_dir() -> None:
    """Inductor writes TORCHINDUCTOR_CACHE_DIR into os.environ (made absolute, or its default) whenever it compiles:
    do it now, so a baseline's first compile changes nothing (the module is small; the fork server imported it)."""
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
    except ImportError:  # another torch release: its first compile may then be reported
        return
    cache_dir()


def _settle_triton_ptxas_path() -> None:
    """Inductor points TRITON_PTXAS_PATH at the ptxas a CUDA build of torch ships (torch/bin/ptxas) before it first
    compiles: do it now, so that first compile changes nothing (2026-12-01 on the H200: every compiled baseline's
    noop row read REWARD_HACK with it "added" while the candidate was built; a CPU build ships no ptxas)."""
    try:
        from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path
    except ImportError:  # another torch release: its first compile may then be reported
        return
    _set_triton_ptxas_path()


class Integrity:
    """Snapshot now; `changed()` later lists patched callables, altered settings and live objects (harness objects
    given here, baseline instances given to `watch`) whose fingerprint moved (empty when untouched)."""

    def __init__(self, objects: dict[str, Any] | None = None,
                 refusals: Callable[[], list[str]] | None = None) -> None:
        _settle_torch_lazy_setup()
        self._refusals = refusals or list  # the audit guard's (audit_guard.install), where it is on
        self._originals = _callables()
        self._settings = _settings()
        self._objects: dict[str, tuple[Any, Fingerprint]] = {}
        for name, obj in (objects or {}).items():
            self.watch(name, obj)

    def watch(self, name: str, obj: Any) -> None:
        """Fingerprint `obj` now (see live_objects.py) and compare it from then on."""
        self._objects[name] = (obj, fingerprint(name, obj))

    def unwatch(self, name: str) -> None:
        self._objects.pop(name, None)

    def harness_sets_environment(self, values: dict[str, str | None]) -> None:
        """Set `values` in os.environ (None: unset) for the harness (each case's compile caches, case_caches.py) and
        compare against them from now on, with the Triton knobs they decide. Where something already differs from the
        snapshot, the snapshot is left as it was, so the difference stays reported."""
        before = _environment_settings()
        clean = all(self._settings.get(key) == value for key, value in before.items())
        set_environment(values)
        if clean:
            self._settings.update(_environment_settings())

    def refusals(self) -> list[str]:
        """What the audit guard refused candidate code so far (empty where it is off)."""
        return self._refusals()

    def changed(self) -> str:
        now = _callables()
        patched = [key for key, value in self._originals.items() if key in now and now[key] is not value]
        removed = [key for key in self._originals if key not in now]
        settings = _settings()
        altered = [_difference(key, self._settings[key], settings[key]) for key in settings
                   if key in self._settings and settings[key] != self._settings[key]]
        moved = [change for name, (obj, before) in self._objects.items()
                 for change in differences(before, fingerprint(name, obj))]
        problems = ([f"patched {key}" for key in patched[:5]] + [f"removed {key}" for key in removed[:3]] + altered
                    + [f"changed {change}" for change in moved[:5]]
                    + [f"the audit guard refused candidate code {refusal}" for refusal in self.refusals()[:3]])
        return "; ".join(problems)


def _difference(key: str, before: Any, after: Any) -> str:
    """`key before -> after`; for lists (modes, registered kernels) only what was added and removed."""
    if isinstance(before, list) and isinstance(after, list):
        added = [item for item in after if item not in before]
        removed = [item for item in before if item not in after]
        return f"{key}: " + ", ".join(part for part in (f"added {added}" if added else "",
                                                          f"removed {removed}" if removed else "") if part)
    return f"{key} {before!r} -> {after!r}"

"""Inductor as a production implementation: a task's PyTorch production path, compiled by `torch.compile`.

Production users get Inductor's fused kernels from one line, so it is a baseline an agent must beat wherever the
framework's own path is several PyTorch kernels (vLLM's forward_native, timm's bf16 ops). `compiled(cls)` returns a
subclass with the same constructor, parameters and forward signature whose forward is compiled on first call
(`dynamic=False`: one graph per case shape, as a serving engine warms up per batch size).

Every instance of one compiled class runs one compiled function, which takes the instance as its first argument:
Dynamo inlines the module and lifts its parameters into graph inputs, so instances of one case share one cache entry,
one graph and the same Triton kernels with the launch configurations their first call tuned. Before, each instance
compiled a private copy; under max-autotune a later copy loaded from the FX graph cache ran coordinate-descent
tuning again (torch 2.11) and drew another configuration, so a noop candidate differed from its baseline by up to
13.7% (H200, 2026-11-30); sharing, no noop candidate compiled anything over 87 rows of 21 tasks and none moved
more than 1.72% (2026-12-01, docs/measurement.md). Sharing the entry also keeps what the private copies avoided:
instances whose guards differ would each add an entry that every call checks, newest first (a `functools.partial`
that compiled as one shared wrapper frame made a noop candidate 10% faster at 7 µs); tests/test_compiled.py asserts,
for every compiled task, that a second instance of a case adds no entry. A task's cases (at most five shapes) add
one entry each, under Dynamo's recompile limit (8), past which it would run later shapes uncompiled: the worker log
and the row's review say so if a baseline ever reaches it (fastkernels.compile_events).
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import torch

from fastkernels.inductor_fixes import install

install()  # keep coordinate descent's saved picks (three torch defects): before any compile in this process

# Inductor's max-autotune without its own CUDA graphs: it benchmarks launch configurations (and GEMM templates) at
# compile time, which pays on some reductions and batched GEMMs and costs compile minutes. No CUDA graphs, because the
# harness captures graphs itself and times eager calls as eager.
MAX_AUTOTUNE = "max-autotune-no-cudagraphs"


def compiled(cls: type, mode: str | None = None) -> type:
    """`cls` with its forward compiled by Inductor: one compiled function for all its instances, built on first call."""
    eager_forward = cls.forward

    def call_forward(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        return eager_forward(module, *args, **kwargs)

    # a code object of this class's own: Dynamo keeps its cache per code object, and every `compiled` class would
    # otherwise share `call_forward`'s
    shared = torch.compile(private_code(call_forward), dynamic=False, mode=mode)

    def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        return shared(self, *args, **kwargs)

    forward.__signature__ = inspect.signature(cls.forward)  # type: ignore[attr-defined]
    forward.__doc__ = f"{cls.__qualname__}.forward compiled by Inductor."
    return type(cls.__name__, (cls,), {"forward": forward, "__module__": cls.__module__, "_inductor_forward": shared,
                                       "__doc__": f"{cls.__name__}, forward compiled by Inductor."})


def private_code(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` with a code object of its own, so Dynamo's cache for it holds this caller's graphs alone."""
    copy = types.FunctionType(function.__code__.replace(), function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = function.__qualname__
    copy.__module__ = function.__module__
    copy.__dict__.update(function.__dict__)
    return copy

"""Inductor as a production implementation: a task's PyTorch production path, compiled by `torch.compile`.

Production users get Inductor's fused kernels from one line, so it is a baseline an agent must beat wherever the
framework's own path is several PyTorch kernels (vLLM's forward_native, timm's bf16 ops). `compiled(cls)` returns a
subclass with the same constructor, parameters and forward signature whose forward is compiled on first call
(`dynamic=False`: one graph per case shape, as a serving engine warms up per batch size).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch


def compiled(cls: type, mode: str | None = None) -> type:
    """`cls` with its forward compiled by Inductor (per instance, on first call)."""

    def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        function = self.__dict__.get("_inductor_forward")
        if function is None:
            eager_forward = functools.partial(cls.forward, self)
            function = self.__dict__["_inductor_forward"] = torch.compile(eager_forward, dynamic=False, mode=mode)
        return function(*args, **kwargs)

    forward.__signature__ = inspect.signature(cls.forward)  # type: ignore[attr-defined]
    forward.__doc__ = f"{cls.__qualname__}.forward compiled by Inductor."
    return type(cls.__name__, (cls,), {"forward": forward, "__module__": cls.__module__,
                                       "__doc__": f"{cls.__name__}, forward compiled by Inductor."})

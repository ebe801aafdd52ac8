"""How higher-level tasks use lower-level ones: `component("rms_norm")` returns the class bound for the build.

Task modules never import a lower task's class directly. They ask for it by task name while they are constructed,
and the worker decides what that name means: the production class for a baseline, the agent's candidate class in
`mode=composed`. This is what lets an L1 candidate change what an L3 task computes.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator, Mapping

_bound: contextvars.ContextVar[Mapping[str, type]] = contextvars.ContextVar("fastkernels_components", default={})


class UnboundComponentError(LookupError):
    """A task module asked for a component that its manifest does not list under `components`."""


def component(task: str) -> type:
    """The class that stands for lower-level task `task` in the module being built."""
    classes = _bound.get()
    if task not in classes:
        bound = ", ".join(sorted(classes)) or "none"
        raise UnboundComponentError(f"component {task!r} is not bound (bound: {bound}); list it under components:")
    return classes[task]


@contextlib.contextmanager
def bind(classes: Mapping[str, type]) -> Iterator[None]:
    """Bind task names to classes while a module is constructed."""
    token = _bound.set(dict(classes))
    try:
        yield
    finally:
        _bound.reset(token)

"""Fingerprints of live objects a candidate can reach through the interpreter and change without patching a class.

Code that walks the worker's objects (gc, reached past the static check) finds the baseline's module instances and
the harness's own clock, flush and judge client. Writing an attribute into one instance's `__dict__` (a slow
`forward` for the baseline, a judge that always says "passed", a clock that shortens the candidate's times) patches
no class, so the namespace snapshot (integrity.py) does not see it. A fingerprint records, by identity, what such a
write would replace: the instance's class, the callables in its `__dict__`, a function's code and closure cells (a
class's own forward's too, where it has a closure), a module's hooks and the storage of its parameters and buffers.
`differences(before, after)` names what moved.

It raises the bar, it is not a seal: in-process code can change anything, including this. The container runner,
with the candidate under its own user, is the defence that holds (docs/progress.md).
"""

from __future__ import annotations

import types
from typing import Any

import torch

Fingerprint = dict[str, Any]
# values in a fingerprint are either ("is", object): compared by identity, or plain tuples compared by value


def fingerprint(name: str, obj: Any) -> Fingerprint:
    """What must stay as it is in `obj` (an nn.Module, a function or any harness object), keyed under `name`."""
    if isinstance(obj, torch.nn.Module):
        return _module(name, obj)
    found: Fingerprint = {f"{name}: class": ("is", type(obj))}
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        found.update(_function(name, obj))
    elif hasattr(obj, "__dict__"):
        for key, value in vars(obj).items():
            if isinstance(value, (types.FunctionType, types.MethodType)):
                found.update(_function(f"{name}.{key}", value))
            elif callable(value):
                found[f"{name}.{key}"] = ("is", value)
        # plain settings a class names as fixed (the clock's launch pad bounds): compared by value
        for key in getattr(type(obj), "FIXED_SETTINGS", ()):
            found[f"{name}.{key}"] = (getattr(obj, key, None),)
    return found


def differences(before: Fingerprint, after: Fingerprint) -> list[str]:
    """Keys whose entry changed, appeared or went missing between two fingerprints of the same objects."""
    changed: list[str] = []
    reported: list[str] = []  # a replaced function's code and cells are not news once the function is reported
    for key in sorted(before.keys() | after.keys()):
        if any(key.startswith((parent + ".", parent + " ")) for parent in reported):
            continue
        old, new = before.get(key), after.get(key)
        count = len(changed)
        if old is None or new is None:
            changed.append(f"{key} {'appeared' if old is None else 'disappeared'}")
        elif isinstance(old, tuple) and old[:1] == ("is",):
            if not (isinstance(new, tuple) and new[:1] == ("is",) and new[1] is old[1]):
                changed.append(f"{key} replaced")
        elif old != new:
            changed.append(f"{key} {old} -> {new}")
        if len(changed) > count:
            reported.append(key)
    return changed


def _function(name: str, function: types.FunctionType | types.MethodType) -> Fingerprint:
    found: Fingerprint = {f"{name}": ("is", function)}
    target = function.__func__ if isinstance(function, types.MethodType) else function
    found[f"{name}.__code__"] = ("is", target.__code__)
    for index, cell in enumerate(target.__closure__ or ()):
        try:
            found[f"{name} closure cell {index}"] = ("is", cell.cell_contents)
        except ValueError:  # an empty cell (a name bound later in the enclosing scope)
            continue
    return found


def _module(name: str, module: torch.nn.Module) -> Fingerprint:
    found: Fingerprint = {}
    for path, sub in module.named_modules(remove_duplicate=False):
        where = f"{name}.{path}" if path else name
        found[f"{where}: class"] = ("is", type(sub))
        forward = type(sub).__dict__.get("forward")
        if isinstance(forward, types.FunctionType) and forward.__closure__:
            # a class-level forward's closure: a compiled baseline's holds the compiled function all its instances
            # run (fastkernels.compiled); swapping that cell slows the baseline and patches no name
            found.update(_function(f"{where}: class forward", forward))
        for key, value in vars(sub).items():
            if key.endswith("hooks") and isinstance(value, dict):
                found[f"{where}.{key}"] = tuple(id(hook) for hook in value.values())
            elif callable(value) and not isinstance(value, (torch.nn.Module, torch.Tensor)):
                found[f"{where}.{key}"] = ("is", value)
    for path, tensor in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        found[f"{name}.{path}: storage"] = (tensor.data_ptr(), str(tensor.dtype), tuple(tensor.shape), tensor.stride(),
                                            str(tensor.device))
    return found

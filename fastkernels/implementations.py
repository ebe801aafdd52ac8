"""Loading implementation classes (task baselines, installed libraries, candidate files) and checking they fit.

A source is `file.py:Class` relative to a task directory, or `package.module:Class` for an installed library.
Every file is imported under a unique module name so a baseline and a candidate with the same file name never
collide in sys.modules.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path

from fastkernels.manifest import Implementation, Manifest


class ImplementationUnavailable(RuntimeError):
    """An implementation that cannot run here (a library not installed, a device it does not support, an import that
    raises); raised as "NAME: WHY"."""

    @property
    def why(self) -> str:
        return str(self).split(": ", 1)[-1]


class ImportRaised(ImplementationUnavailable):
    """Installed, yet importing it raised: the benchmark's tests treat it as a defect, a run as unavailable."""


class InterfaceMismatch(TypeError):
    """A class whose constructor or forward does not take the task's parameters."""


def import_file(path: Path, namespace: str) -> object:
    """Import a Python file once per process, as a module named after `namespace` and the file's absolute path.

    A second request returns the same module: classes keep one identity (the integrity snapshot relies on it).
    """
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"fastkernels_loaded.{namespace}.{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def missing_requirements(implementation: Implementation, device: str) -> str | None:
    """Why `implementation` cannot run on `device` here, or None when it can."""
    if device not in implementation.devices:
        return f"runs on {', '.join(implementation.devices)} only"
    for requirement in implementation.requires:
        if importlib.util.find_spec(requirement) is None:
            return f"{requirement} is not installed"
    return None


def load_implementation(task_dir: Path, implementation: Implementation, device: str) -> type:
    """The class an implementation names; ImplementationUnavailable when it cannot run here: not installed, another
    device, or an import that raises. So one broken production library leaves the task's other baselines to serve,
    and every row names it (`baseline_alternatives`, `review`); the eager module raising is still the task's
    BASELINE_ERROR (plan_task loads it outside any catch)."""
    why = missing_requirements(implementation, device)
    if why is not None:
        raise ImplementationUnavailable(f"{implementation.name}: {why}")
    location, _, class_name = implementation.source.partition(":")
    try:
        if location.endswith(".py"):
            module = import_file(task_dir / location, namespace=f"tasks.{task_dir.name}")
        else:
            module = importlib.import_module(location)
    except Exception as error:  # noqa: BLE001 - installed, yet its import chain raises (2026-12-07: SGLang's on CUDA)
        # the row keeps one line; the log (a worker's stderr) keeps where it raised
        print(f"{implementation.name} ({implementation.source}) raised at import:\n"
              + "".join(traceback.format_exception(error, limit=-12)), file=sys.stderr, flush=True)
        raise ImportRaised(f"{implementation.name}: raised at import: {_first_line(error)}") from error
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise ImplementationUnavailable(f"{implementation.name}: {location} defines no {class_name}") from None


def _first_line(error: BaseException) -> str:
    """`Type: first line of the message`, at most 300 characters: a row's reason stays one line."""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0] if message else ''}"[:300]


def load_candidate(path: Path, manifest: Manifest) -> type:
    """The candidate class in `path`; import errors propagate (the worker records them as COMPILE_ERROR)."""
    module = import_file(path, namespace=f"candidates.L{manifest.level}")
    class_name = manifest.interface.class_name
    if not hasattr(module, class_name):
        raise InterfaceMismatch(f"{path.name} defines no class {class_name}")
    return getattr(module, class_name)


def check_interface(cls: type, manifest: Manifest) -> None:
    """Raise InterfaceMismatch unless constructor and forward take the manifest's parameters, in order."""
    for method, wanted in (("__init__", manifest.interface.init), ("forward", manifest.interface.forward)):
        function = getattr(cls, method, None)
        if function is None:
            raise InterfaceMismatch(f"{cls.__name__} has no {method}")
        try:
            parameters = list(inspect.signature(function).parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_POSITIONAL for p in parameters):
            continue
        names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if names[: len(wanted)] != wanted:
            raise InterfaceMismatch(
                f"{cls.__name__}.{method}({', '.join(names)}) does not match the task's ({', '.join(wanted)})"
            )
        extra = [p.name for p in parameters[len(wanted):] if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
        if extra:
            raise InterfaceMismatch(f"{cls.__name__}.{method} requires extra parameters {', '.join(extra)}")
